#include "pipelines/moss_image/pipeline.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "backend/device/device.h"
#include "core/error.h"
#include "families/flux2_vae/memory.h"
#include "families/flux2_vae/model.h"
#include "families/flux2_vae/pixels.h"
#include "families/flux2_vae/tokens.h"
#include "families/moss_image/encoder/memory.h"
#include "families/moss_image/encoder/prompt_encoder.h"
#include "families/moss_image/sampler/noise.h"
#include "families/moss_image/sampler/schedule.h"
#include "families/moss_image/sampler/sample.h"
#include "families/moss_image/transformer/memory.h"
#include "families/moss_image/transformer/transformer.h"

namespace tf::pipelines {

struct MossImagePipeline::State {
  MossImageFolder folder;
  PipelineOptions options;
  std::mutex mu;  // one generation at a time: the components load and go inside it
  std::optional<moss_image::PromptEncoder> encoder;
  std::optional<moss_image::Transformer> transformer;
  std::optional<flux2_vae::Vae> vae;
};

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GiB", bytes / kGiB);
  return b;
}

void note(const PipelineOptions& o, const std::string& line) {
  if (o.notes) o.notes(line);
}

Progress stage(const StageProgress& p, const std::string& name) { return p ? p(name) : Progress{}; }

AvailableMemory limit(const PipelineOptions& o) {
  AvailableMemory have = available_memory(o.device);
  if (o.max_memory_bytes > 0 && o.max_memory_bytes < double(have.bytes))
    have = {static_cast<uint64_t>(o.max_memory_bytes), "--max-memory"};
  return have;
}

void check_rows(const Tensor& t, const std::string& what, int64_t text_dim) {
  if (t.dtype != DType::BF16 || t.rank() != 2 || t.dim(1) != text_dim || t.dim(0) < 1 ||
      t.dim(0) > moss_image::kMaxPromptTokens)
    fail(what + " is " + t.describe() + ", expected BF16 [n, " + std::to_string(text_dim) + "] with 1 <= n <= " +
         std::to_string(moss_image::kMaxPromptTokens));
}

}  // namespace

void MossImagePipeline::load_transformer(State& s) {
  if (!s.transformer) s.transformer.emplace(moss_image::Transformer::load(s.folder.transformer, {s.options.device, true}));
}

const MossImageFolder& MossImagePipeline::folder() const { return s_->folder; }
Device MossImagePipeline::device() const { return s_->options.device; }

const moss_image::Transformer& MossImagePipeline::transformer() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  load_transformer(*s_);
  return *s_->transformer;
}

MossImagePipeline MossImagePipeline::load(const std::string& dir, const PipelineOptions& options) {
  MossImagePipeline p;
  p.s_ = std::make_shared<State>();
  p.s_->folder = MossImageFolder::open(dir);
  p.s_->options = options;
  return p;
}

void MossImagePipeline::check(const GenerateRequest& r) const {
  const MossImageFolder& f = s_->folder;
  const auto& name = s_->options.field_name;
  const int64_t m = f.vae_config.picture_multiple();
  for (auto [field, v] : {std::pair<const char*, int64_t>{"width", r.width}, {"height", r.height}})
    if (v < m || v % m || v > kMaxPngSide)
      fail(name(field) + " " + std::to_string(v) + ": expected a multiple of " + std::to_string(m) + " from " +
           std::to_string(m) + " to " + std::to_string(kMaxPngSide));
  if (r.steps < 1 || r.steps > moss_image::kMaxSampleSteps)
    fail(name("steps") + " " + std::to_string(r.steps) + ": expected 1 to " + std::to_string(moss_image::kMaxSampleSteps));
  if (!std::isfinite(r.guidance) || r.guidance < 0)
    fail(name("guidance") + " " + std::to_string(r.guidance) + ": expected a finite number of at least 0");
  if (r.shift && (!std::isfinite(*r.shift) || *r.shift <= 0))
    fail(name("shift") + " " + std::to_string(*r.shift) + ": expected a finite number above 0");
  const auto& tc = f.transformer_config;
  const int64_t h = r.height / m, w = r.width / m;
  if (r.noise.defined() && (r.noise.dtype != DType::F32 || r.noise.shape != Shape{tc.latent_channels, h, w}))
    fail(name("noise") + " is " + r.noise.describe() + ", expected F32 [" + std::to_string(tc.latent_channels) + ", " +
         std::to_string(h) + ", " + std::to_string(w) + "] for a " + std::to_string(r.width) + "x" +
         std::to_string(r.height) + " picture");
  const bool cfg = r.guidance != 1.0;
  if (r.prompt_rows.defined() || r.negative_rows.defined()) {
    check_rows(r.prompt_rows, name("prompt_rows"), tc.text_dim);
    if (cfg) check_rows(r.negative_rows, name("negative_rows"), tc.text_dim);
  }
  for (int64_t i : r.negative_skip_layers)
    if (i < 0 || i >= tc.layers)
      fail(name("negative_skip_layers") + " " + std::to_string(i) + ": the transformer has blocks 0 to " + std::to_string(tc.layers - 1));
  // the sizes alone, before any work: the prompts' lengths are known only once they are tokenized
  const int64_t text = !r.prompt_rows.defined() ? 1 : r.prompt_rows.dim(0);
  moss_image::require_memory_for_pass(tc, {h * w, h * w}, {text, text}, 0, limit(s_->options),
                                      name("memory"), "a " + std::to_string(r.width) + "x" +
                                                              std::to_string(r.height) + " guidance step");
  flux2_vae::require_memory_for(flux2_vae::Direction::Decode, f.vae_config, r.width, r.height, s_->options.device,
                                limit(s_->options), name("memory"));
}

Generated MossImagePipeline::generate(const GenerateRequest& r, const StageProgress& progress,
                                      const StepCallback& on_step) const {
  check(r);
  std::lock_guard<std::mutex> lock(s_->mu);
  State& s = *s_;
  const PipelineOptions& o = s.options;
  const MossImageFolder& f = s.folder;
  const auto& tc = f.transformer_config;
  const bool cfg = r.guidance != 1.0;
  const int64_t m = f.vae_config.picture_multiple(), h = r.height / m, w = r.width / m;
  const double transformer_bytes = moss_image::transformer_weight_bytes(tc);
  Generated g;

  // Prompt rows: given, or both prompts through the encoder in one pass.
  Tensor rows, negative_rows;
  if (r.prompt_rows.defined()) {
    rows = r.prompt_rows;
    negative_rows = r.negative_rows;
  } else {
    auto t0 = Clock::now();
    if (!s.encoder) s.encoder.emplace(moss_image::PromptEncoder::load(f.dir, {o.device, true}));
    g.seconds.load_encoder = since(t0);
    t0 = Clock::now();
    std::vector<std::string> prompts{r.prompt};
    if (cfg) prompts.push_back(r.negative);
    const auto encoded = s.encoder->encode(prompts, stage(progress, "encode"), [&](int64_t tokens) {
      moss_image::require_memory_for_tokens(f.encoder_config, tokens, limit(o), "the prompts");
    });
    g.seconds.encode = since(t0);
    const char* names[2] = {"prompt", "negative prompt"};
    for (size_t k = 0; k < encoded.size(); ++k)
      if (encoded[k].dropped > 0)
        note(o, "warning: the " + std::string(names[k]) + " is cut to " + std::to_string(moss_image::kMaxPromptTokens) +
                    " tokens as the official pipeline cuts it; " + std::to_string(encoded[k].dropped) +
                    " tokens dropped");
    rows = encoded[0].rows;
    if (cfg) negative_rows = encoded[1].rows;
    // Keep the encoder for the next picture only where the rest of the run fits beside it.
    const double rest = (s.transformer ? 0 : transformer_bytes) +
                        moss_image::transformer_memory(tc, {h * w, h * w}, {rows.dim(0), rows.dim(0)}).bytes +
                        (s.vae ? 0 : MossImageFolder::weight_file_bytes(f.vae)) +
                        flux2_vae::decode_memory(f.vae_config, r.width, r.height, o.device).bytes;
    const AvailableMemory have = limit(o);
    if (rest > double(have.bytes)) {
      s.encoder.reset();
      release_cached_memory(o.device);
      note(o, "encoder released before the transformer loads: the rest of the run needs an estimated " + gib(rest) +
                  ", " + gib(double(have.bytes)) + " " + have.what + " beside it");
    } else {
      note(o, "encoder kept loaded: the rest of the run needs an estimated " + gib(rest) + " of the " +
                  gib(double(have.bytes)) + " " + have.what + " beside it");
    }
  }
  g.prompt_tokens = rows.dim(0);
  g.negative_tokens = cfg ? negative_rows.dim(0) : 0;
  g.prompt_rows = rows;
  if (cfg) g.negative_rows = negative_rows;

  // The starting noise: torch.randn((1, C, h, w), generator=torch.Generator().manual_seed(seed)).
  Tensor x = empty(DType::F32, {tc.latent_channels, h, w});
  if (!r.noise.defined())
    copy_into(x, moss_image::torch_randn_f32({1, tc.latent_channels, h, w}, r.seed).reshaped(x.shape));
  else
    copy_into(x, r.noise);
  g.noise = empty(DType::F32, x.shape);
  copy_into(g.noise, x);
  g.sigmas = moss_image::schedule_sigmas(r.steps, r.shift.value_or(f.scheduler_config.shift));

  auto t0 = Clock::now();
  if (!s.transformer)
    moss_image::require_memory_for_pass(tc, {h * w, h * w}, {g.prompt_tokens, g.negative_tokens}, transformer_bytes,
                                        limit(o), f.transformer, "the transformer with a guidance step's pass");
  load_transformer(s);
  g.seconds.load_transformer = since(t0);
  t0 = Clock::now();
  moss_image::SamplingRun run{x, rows, cfg ? negative_rows : Tensor{}, r.negative_skip_layers, g.sigmas, r.guidance};
  x = moss_image::sample(*s.transformer, run, stage(progress, "sample"), on_step);
  g.seconds.sample = since(t0);
  g.latents = x;

  t0 = Clock::now();
  if (!s.vae) s.vae.emplace(flux2_vae::Vae::load(f.vae, o.device, {false, true}));
  if (o.device == Device::CUDA) {  // the decoder's activations mapped into the pool with the load, not in the decode
    const auto need = uint64_t(flux2_vae::decode_memory(f.vae_config, r.width, r.height, o.device).bytes);
    if (need < available_memory(o.device).bytes) {
      const Tensor reserve = empty(DType::U8, {int64_t(need)}, o.device);
    }
  }
  g.seconds.load_vae = since(t0);
  t0 = Clock::now();
  const auto& vw = s.vae->weights();
  const Tensor z = flux2_vae::latents_from_packed(x, vw.bn_mean, vw.bn_var, f.vae_config.batch_norm_eps);
  g.picture = flux2_vae::output_to_picture(s.vae->decode(z, stage(progress, "decode")));
  g.seconds.decode = since(t0);
  return g;
}

}  // namespace tf::pipelines
