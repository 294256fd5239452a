#pragma once
// The whole MOSS-Image pipeline on the reference gate (tf-moss-image check pipeline). Its case
// (component "moss_image.pipeline", written by python/cases/moss_pipeline_case.py) holds runs r<k>
// (metadata "runs": JSON [{"prompt", "negative", "seed", "width", "height", "steps", "guidance",
// "shift", "skip_layers"}], and "gated_runs": the runs with per-step tensors):
//   whole.r<k>.noise   F32 [C, h, w]  torch.randn from the seed;  whole.r<k>.sigmas F32 [n + 1]
//   in.r<k>.prompt.rows, in.r<k>.negative.rows  BF16 [L, text_dim]  the float32 run's rows, rounded
//   in.r<k>.s<i>.latents F32 [C, h, w], in.r<k>.s<i>.sigma F32 [1]  step i's input in the float32 run
//   steps r<k>.s<i>.cond, r<k>.s<i>.uncond  (gated runs): each branch's velocity on that input
//   whole.r<k>.picture.f32, whole.r<k>.picture.bf16  U8 [H, W, 3]: the float32 and torch bf16 pictures
// Gated: the schedule bit for bit, the starting noise within 2e-6, each step's branch velocities by
// the rule (both branches packed in one pass, as the pipeline runs them), our picture's PSNR from the
// float32 picture at least torch bf16's minus 1 dB on average and at worst, and a repeated picture
// byte for byte.
#include <ostream>
#include <string>

#include "check/gate/plant.h"
#include "check/gate/report.h"
#include "pipelines/moss_image/pipeline.h"

namespace tf::check::gate {

inline constexpr const char* kPipelineComponent = "moss_image.pipeline";
inline constexpr double kNoiseTolerance = 2e-6;
inline constexpr double kPsnrMarginDb = 1.0;

struct PipelineGateOptions {
  std::string case_path;
  Plant plant;  // row (default: run 0's middle step's cond), repeat, or the extras schedule, noise, picture
};

// The pipeline's own plants.
inline const std::vector<std::string> kPipelinePlants = {"schedule", "noise", "picture"};

GateReport run_pipeline_gate(const pipelines::MossImagePipeline& pipeline, const PipelineGateOptions& options,
                             std::ostream& out);

}  // namespace tf::check::gate
