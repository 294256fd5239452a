#pragma once
// The sampling loop on the transformer's device (references.md, "The sampler", "Step"): the latents
// stay there from the noise to the last step; each step turns them into both branches' token rows,
// runs the packed pass (the negative branch skipping its blocks) and applies guidance and the Euler
// update (backend/elementwise/guided_euler_step.h, the host's fp32 numerics, so the bytes are those of
// update.h's guided() and euler_step() on the host). On CUDA the first step runs eagerly, the second is
// recorded as one graph (sigma and the step's scalars read from device memory) and every later step
// replays it. TF_SAMPLER_LOOP=host runs the same steps with the update on the CPU (the same bytes).
#include <cstdint>
#include <functional>
#include <vector>

#include "core/tensor.h"
#include "families/common/progress.h"
#include "families/moss_image/transformer/transformer.h"

namespace tf::moss_image {

struct SamplingRun {
  Tensor noise;          // F32 [C, h, w] (CPU): the starting latents
  Tensor rows;           // BF16 [L, text_dim] (CPU): the prompt's rows
  Tensor negative_rows;  // the negative prompt's; undefined: no negative branch (guidance 1)
  std::vector<int64_t> negative_skip_layers;
  std::vector<float> sigmas;  // descending, ending in 0
  double guidance = 3.0;
};

// Called after step `step` of `steps` with the latents (CPU F32 [C, h, w]); may throw to stop the run.
using SampleCallback = std::function<void(int64_t step, int64_t steps, const Tensor& latents)>;

// The last latents, F32 [C, h, w] on the CPU. Progress reports each step.
Tensor sample(const Transformer& transformer, const SamplingRun& run, const Progress& progress = {},
              const SampleCallback& on_step = {});

}  // namespace tf::moss_image
