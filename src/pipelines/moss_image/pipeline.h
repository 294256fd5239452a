#pragma once
// MOSS-Image prompt -> picture, as the official MOSSImagePipeline.__call__ (docs/perf/transformer/
// references.md, "The sampler"): both prompts in the chat format encoded in one pass; the starting
// noise (torch's CPU generator) or a given one; the shifted, snapped schedule; each step's cond
// and uncond branches packed into one transformer pass (block 22 skipped in the negative one),
// guidance and the Euler update in fp32; then the VAE hand-off (batch-norm statistics undone,
// unpatchified), the decoder in fp32-class precision, clipped, 8-bit RGB.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "families/common/progress.h"
#include "io/png.h"
#include "families/moss_image/sampler/sample.h"
#include "families/moss_image/transformer/transformer.h"
#include "pipelines/moss_image/folder.h"

namespace tf::pipelines {

struct GenerateRequest {
  std::string prompt, negative;  // UTF-8; the negative prompt goes through the same chat format
  int64_t width = 1024, height = 1024;
  int64_t steps = 50;
  double guidance = 3.0;
  std::optional<double> shift;  // absent: the scheduler config's (5)
  uint64_t seed = 0;
  Tensor noise;  // F32 [latent_channels, H/16, W/16] (CPU); empty: torch.randn from `seed`
  // Precomputed prompt rows (BF16 [n, text_dim], CPU) instead of the encoder: both, or neither.
  Tensor prompt_rows, negative_rows;
  std::vector<int64_t> negative_skip_layers{22};
};

struct StageSeconds {
  double load_encoder = 0, encode = 0, load_transformer = 0, sample = 0, load_vae = 0, decode = 0;
  double total() const { return load_encoder + encode + load_transformer + sample + load_vae + decode; }
};

struct Generated {
  RgbImage picture;
  Tensor noise;               // F32 [latent_channels, H/16, W/16]: the sampler's first x
  Tensor latents;             // the sampler's last x
  std::vector<float> sigmas;  // the schedule, ending in 0
  Tensor prompt_rows, negative_rows;  // what the transformer was given: BF16 [n, text_dim] (negative: empty without guidance)
  int64_t prompt_tokens = 0, negative_tokens = 0;
  StageSeconds seconds;
};

// What the pipeline tells its user as it goes, one line each (truncated prompts, which components
// stay loaded).
using Notes = std::function<void(const std::string&)>;
// A stage's progress reporter ("encode", "sample", "decode"); sampling reports each step.
using StageProgress = std::function<Progress(const std::string& stage)>;
// Called after each sampling step with the step index, its count and the new latents (CPU F32); it
// may throw to stop the run (a Python caller's Ctrl-C).
using StepCallback = moss_image::SampleCallback;

struct PipelineOptions {
  Device device = Device::CPU;
  double max_memory_bytes = 0;  // 0: what the device has
  Notes notes;
  // How the caller names a request's field in errors ("width" -> "--width"): width, height, steps,
  // guidance, shift, noise, prompt_rows, negative_rows, negative_skip_layers, memory (the size as a whole).
  std::function<std::string(const std::string& field)> field_name = [](const std::string& f) { return f; };
};

class MossImagePipeline {
 public:
  // Reads and cross-checks every config of the folder; weights load at first use.
  static MossImagePipeline load(const std::string& dir, const PipelineOptions& options);

  const MossImageFolder& folder() const;
  Device device() const;

  // Refuses a request the pipeline cannot run (sizes not multiples of 16 or past the limits, steps
  // outside [1, 100000], negative or non-finite guidance, a bad shift, noise or rows of the wrong
  // shape, a skipped block the transformer lacks, more memory than the device has), naming the field.
  void check(const GenerateRequest& r) const;

  // The picture. Components load as they are first needed; the encoder is released before the
  // transformer loads when the device could not hold both (options.notes says which happened).
  Generated generate(const GenerateRequest& r, const StageProgress& progress = {},
                     const StepCallback& on_step = {}) const;

  // The transformer, loaded at first use (for a gate's single steps).
  const moss_image::Transformer& transformer() const;

 private:
  struct State;
  static void load_transformer(State& s);
  std::shared_ptr<State> s_;
};

}  // namespace tf::pipelines
