#pragma once
// The encoder and decoder as named stages, the unit the reference gate checks one at a time:
// encoder enc.conv_in, enc.down.0.., enc.mid, enc.moments (norm, SiLU, conv_out, quant_conv);
// decoder dec.conv_in (post_quant_conv, conv_in), dec.mid, dec.up.0.., dec.out (norm, SiLU, conv_out).
#include <vector>

#include "families/common/steps.h"
#include "families/flux2_vae/config.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

// Each stage maps F32 [C, H, W] -> F32 [C', H', W'] on the weights' device; the stages keep
// references to `w` and `c`: both must outlive them.
std::vector<Step> encoder_stages(const Weights& w, const Config& c);
std::vector<Step> decoder_stages(const Weights& w, const Config& c);

}  // namespace tf::flux2_vae
