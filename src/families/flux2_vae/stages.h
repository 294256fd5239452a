#pragma once
// The encoder and decoder as named stages, the unit the reference gate checks one at a time:
// encoder enc.conv_in, enc.down.0.., enc.mid, enc.moments (norm, SiLU, conv_out, quant_conv);
// decoder dec.conv_in (post_quant_conv, conv_in), dec.mid, dec.up.0.., dec.out (norm, SiLU, conv_out).
#include <functional>
#include <string>
#include <vector>

#include "families/flux2_vae/config.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

struct Stage {
  std::string name;
  std::function<Tensor(const Tensor&)> run;  // F32 [C, H, W] -> F32 [C', H', W'] on the weights' device
};

// The stages keep references to `w` and `c`: both must outlive them.
std::vector<Stage> encoder_stages(const Weights& w, const Config& c);
std::vector<Stage> decoder_stages(const Weights& w, const Config& c);

// Runs stages in order; `after(name, output)` (optional) sees each stage's output.
Tensor run_stages(const std::vector<Stage>& stages, Tensor x,
                  const std::function<void(const std::string&, const Tensor&)>& after = nullptr);

}  // namespace tf::flux2_vae
