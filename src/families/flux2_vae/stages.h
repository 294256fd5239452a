#pragma once
// The encoder and decoder as named stages, the unit the reference gate checks one at a time:
// encoder enc.conv_in, enc.down.0.., enc.mid, enc.moments (norm, SiLU, conv_out, quant_conv);
// decoder dec.conv_in (post_quant_conv, conv_in), dec.mid, dec.up.0.., dec.out (norm, SiLU, conv_out).
#include <functional>
#include <string>
#include <vector>

#include "backend/norm/group_stats.h"
#include "families/common/steps.h"
#include "families/flux2_vae/config.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

// A stage that may be handed its input's GroupNorm statistics (x_stats, null: it takes its own) by the stage
// before, where its first op normalises its input, and may take its output's (y_stats, null: not wanted) for
// the stage after.
struct Stage {
  std::string name;
  std::function<Tensor(const Tensor& x, const GroupStats* x_stats, GroupStats* y_stats)> run;
  bool norms_input = false;
};

// Each stage maps F32 [C, H, W] -> F32 [C', H', W'] on the weights' device; the stages keep
// references to `w` and `c`: both must outlive them.
std::vector<Stage> encoder_stages(const Weights& w, const Config& c);
std::vector<Stage> decoder_stages(const Weights& w, const Config& c);
// The stages as steps, each alone (the statistics its own), for the gate.
std::vector<Step> steps_of(const std::vector<Stage>& stages);
// The stages in turn on x, each handing the next its output's statistics where the next normalises its input;
// each finished stage reported to `progress`.
Tensor run_stages(const std::vector<Stage>& stages, Tensor x, const Config& c, const Progress& progress = {});

}  // namespace tf::flux2_vae
