// tensorfold._core: the engine's families for the tensorfold package (python/tensorfold).
#include "errors.h"
#include "module.h"

NB_MODULE(_core, m) {
  m.doc() = "TensorFold's engine (use the tensorfold package, not this module)";
  tfpy::register_errors(m);
  tfpy::register_encoder(m);
  tfpy::register_vae(m);
  tfpy::register_pipeline(m);
}
