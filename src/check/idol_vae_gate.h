#pragma once
// The FLUX.2 VAE's reference gate (tf-idol-vae check): each stage of a case written by
// python/cases/idol_case.py, run alone on float64's input, must be within twice torch bf16's
// distance from float64 (or twice plain bf16 rounding's, if larger) in cosine error and in
// worst-row relative error (rows are positions, or tokens); the decoded picture must be within one
// level of float64's; a whole encode must repeat byte for byte. Whole-run distances are printed.
#include <ostream>
#include <string>
#include <vector>

#include "check/compare.h"
#include "families/flux2_vae/model.h"

namespace tf::check {

struct VaeGateOptions {
  // A planted fault the gate must catch: "" (none), "row-error[@STAGE]" (one row of the stage's
  // output, tokens.sample unless named, 2% off), "padding-row" (one of feature2's five zero rows
  // made non-zero).
  std::string plant;
};

struct VaeStageResult {
  std::string name;
  Distance ours, torch_bf16, rounding;
  bool has_torch_bf16 = false;
  double limit_cosine = 0, limit_row = 0;
  bool pass = false;
};

struct VaeGateReport {
  std::vector<VaeStageResult> stages;
  Distance whole_encode, whole_encode_mean, whole_decode;
  int picture_max_level_difference = 0;
  bool picture_pass = false, repeat_pass = false, pass = false;
};

VaeGateReport run_vae_gate(const flux2_vae::Vae& vae, const std::string& case_path, const VaeGateOptions& opt,
                           std::ostream& log);

}  // namespace tf::check
