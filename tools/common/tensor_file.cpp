#include "common/tensor_file.h"

#include "core/error.h"
#include "io/safetensors.h"

namespace tf::tools {

Tensor read_tensor(const std::string& flag, const std::string& file, const std::string& name, bool rank3_is_unbatched) {
  const auto f = SafetensorsFile::open(file);
  if (!f->has(name)) fail(flag + " " + file + ": no tensor \"" + name + "\"");
  Tensor t = f->get(name);
  if (t.rank() >= 1 && t.dim(0) == 1 && (t.rank() == 4 || (t.rank() == 3 && !rank3_is_unbatched))) {
    Shape s(t.shape.begin() + 1, t.shape.end());
    t = t.reshaped(s);
  }
  Tensor own = empty(t.dtype, t.shape);  // own storage: the mapping goes with the file
  copy_into(own, t);
  return own;
}

}  // namespace tf::tools
