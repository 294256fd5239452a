#pragma once
// The FLUX.2 VAE on the stepwise reference gate (tf-flux2-vae check). Its case (component
// "flux2_vae", written by python/cases/flux2_vae_case.py) holds the steps enc.conv_in .. enc.moments,
// tokens.sample, tokens.mean, dec.conv_in .. dec.out, with float64 references (f32.<step> is F64);
// the inputs in.image (U8 [H, W, 3]), in.noise and in.latents (F32 [Cz, H/8, W/8]); and
// whole.picture (U8 [H, W, 3], float64's decode as the pipeline's postprocess makes it).
// enc.conv_in runs on in.image, dec.conv_in on in.latents, the tokens on f32.enc.moments (and
// in.noise), every other step on the previous step's f32 output.
// Gated: each step alone by the rule (rows are positions, or tokens), the decoded picture within one
// level of float64's, a whole encode repeating byte for byte. Whole-run distances are printed.
#include <ostream>
#include <string>
#include <vector>

#include "check/gate/plant.h"
#include "check/gate/report.h"
#include "families/flux2_vae/model.h"

namespace tf::check::gate {

inline constexpr const char* kFlux2VaeComponent = "flux2_vae";

// The VAE's own plants: padding-row (one of feature2's five zero rows made non-zero).
const std::vector<std::string>& flux2_vae_plants();

// Runs the gate (row's default step: tokens.sample), printing its table and summary to `out`.
GateReport run_flux2_vae_gate(const flux2_vae::Vae& vae, const std::string& case_path, const Plant& plant,
                              std::ostream& out);

}  // namespace tf::check::gate
