// Times TensorFold's MOSS-Image transformer on a device (the C++ half of bench/transformer_vs_torch):
// the checkpoint's load, then per picture size one forward (one sample) and one guidance step (the
// cond and uncond samples packed in one velocity call, the uncond one skipping the middle block),
// and the guidance step as the sampling loop runs it on the device (sampler/sample.h: token rows,
// the packed pass and the guided Euler update, one replayed graph a step; the time of a 12-step run
// less a 2-step run, over 10), as JSON lines on stdout shaped like torch_timer.py's. A size s means latents [C, s/16, s/16].
//   bench_transformer_timer --model DIR [--sizes 512,1024,2048] [--text 100] [--uncond-text 20]
//                           [--reps 5] [--device cuda|cpu]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/device/device.h"
#include "core/bf16.h"
#include "core/bytes_hash.h"
#include "core/error.h"
#include "families/moss_image/sampler/sample.h"
#include "families/moss_image/transformer/transformer.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/runtime.h"
#endif

namespace {

using namespace tf;
using Clock = std::chrono::steady_clock;
constexpr const char* kTool = "bench_transformer_timer";
constexpr int64_t kPixelsPerLatent = 16;  // the VAE's 8x and the 2x2 patchify
constexpr float kSigma = 0.933f;          // a mid-schedule sigma; the work does not depend on it

struct Flags {
  std::string model, device = "cuda", sizes = "512,1024,2048";
  int64_t text = 100, uncond_text = 20;
  int reps = 5;
};

int64_t parse_int(const std::string& flag, const std::string& v, int64_t min) {
  size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  require(used == v.size() && x >= min,
          std::string(kTool) + ": " + flag + " \"" + v + "\" is not an integer >= " + std::to_string(min));
  return x;
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    require(i + 1 < argc, std::string(kTool) + ": " + k + " needs a value");
    const std::string v = argv[i + 1];
    if (k == "--model") f.model = v;
    else if (k == "--device") f.device = v;
    else if (k == "--sizes") f.sizes = v;
    else if (k == "--text") f.text = parse_int(k, v, 1);
    else if (k == "--uncond-text") f.uncond_text = parse_int(k, v, 1);
    else if (k == "--reps") f.reps = static_cast<int>(parse_int(k, v, 1));
    else fail(std::string(kTool) + ": unknown flag " + k +
              " (expected --model, --sizes, --text, --uncond-text, --reps, --device)");
  }
  require(!f.model.empty(), std::string(kTool) + ": --model DIR is required");
  return f;
}

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const int64_t size = parse_int("--sizes", item, kPixelsPerLatent);
    require(size % kPixelsPerLatent == 0,
            std::string(kTool) + ": --sizes " + item + " is not a multiple of 16 (a latent is 16x16 pixels)");
    v.push_back(size);
  }
  require(!v.empty(), std::string(kTool) + ": --sizes \"" + s + "\" names no size");
  std::sort(v.begin(), v.end());  // smallest first: a large size's heat slows the clock for the ones after it
  return v;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Tensor random_latents(int64_t C, int64_t h, int64_t w, std::mt19937& gen) {
  Tensor t = empty(DType::F32, {C, h, w});
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = n(gen);
  return t;
}

// Prompt rows at the encoder's scale (python/cases/moss_transformer_case.py draws 2 N(0, 1)).
Tensor random_rows(int64_t L, int64_t text_dim, std::mt19937& gen) {
  Tensor t = empty(DType::BF16, {L, text_dim});
  std::normal_distribution<float> n(0.0f, 2.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<uint16_t>()[i] = bf16_bits_from_float(n(gen));
  return t;
}

bool same_bytes(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].data, b[i].data, a[i].nbytes()) != 0) return false;
  return true;
}

int64_t nonfinite(const std::vector<Tensor>& outs) {
  int64_t n = 0;
  for (const Tensor& t : outs)
    for (int64_t i = 0; i < t.numel(); ++i) n += !std::isfinite(t.ptr<const float>()[i]);
  return n;
}

uint64_t outputs_hash(const std::vector<Tensor>& outs) {
  uint64_t h = kFnvOffsetBasis;
  for (const Tensor& t : outs) h = bytes_hash(t.data, t.nbytes(), h);
  return h;
}

std::string json_list(const std::vector<double>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

// One measurement: a first call (warm-up; its output kept), a second to check the bytes repeat,
// then `reps` timed calls. velocity returns host tensors, so each call ends synchronised.
void time_case(const moss_image::Transformer& tr, const char* kind, int64_t size,
               const std::vector<moss_image::TransformerSample>& samples, int reps, const std::string& extra) {
  const std::vector<Tensor> first = tr.velocity(samples, kSigma);
  const bool repeat = same_bytes(first, tr.velocity(samples, kSigma));
  std::vector<double> runs;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    const std::vector<Tensor> out = tr.velocity(samples, kSigma);
    runs.push_back(seconds_since(t0) * 1e3);
  }
  const int64_t h = samples[0].latents.dim(1), w = samples[0].latents.dim(2);
  std::printf("{\"impl\": \"tensorfold\", \"kind\": \"%s\", \"size\": %ld, \"h\": %ld, \"w\": %ld, \"text\": %ld%s, "
              "\"median_ms\": %.4f, \"repeat_identical\": %s, \"nonfinite\": %ld, \"out_hash\": \"%016llx\", "
              "\"runs\": %s}\n",
              kind, long(size), long(h), long(w), long(samples[0].rows.dim(0)), extra.c_str(), median(runs),
              repeat ? "true" : "false", long(nonfinite(first)), static_cast<unsigned long long>(outputs_hash(first)),
              json_list(runs).c_str());
  std::fflush(stdout);
}

// The sampling loop's steady step: runs of 2 and 12 steps (the first eager, the second recorded), the
// difference over 10 steps, median of `reps` pairs.
void time_sampler_step(const moss_image::Transformer& tr, int64_t size, const Tensor& latents, const Tensor& rows,
                       const Tensor& negative_rows, int64_t skip, int reps) {
  auto run_for = [&](int steps) {
    moss_image::SamplingRun run{.noise = latents, .rows = rows, .negative_rows = negative_rows,
                                .negative_skip_layers = {skip}, .sigmas = {}, .guidance = 3.0};
    for (int i = 0; i < steps; ++i) run.sigmas.push_back(1.0f - 0.9f * float(i) / float(steps));
    run.sigmas.push_back(0.0f);
    const auto t0 = Clock::now();
    const Tensor out = moss_image::sample(tr, run);
    return std::make_pair(seconds_since(t0) * 1e3, out);
  };
  const Tensor first = run_for(12).second;
  const bool repeat = same_bytes({first}, {run_for(12).second});
  std::vector<double> steps;
  for (int i = 0; i < reps; ++i) {
    const double a = run_for(2).first, b = run_for(12).first;
    steps.push_back((b - a) / 10.0);
  }
  std::printf("{\"impl\": \"tensorfold\", \"kind\": \"guidance_device_loop\", \"size\": %ld, \"h\": %ld, \"w\": %ld, \"text\": %ld, "
              "\"uncond_text\": %ld, \"skip_layer\": %ld, \"median_ms\": %.4f, \"repeat_identical\": %s, "
              "\"nonfinite\": %ld, \"runs\": %s}\n",
              long(size), long(latents.dim(1)), long(latents.dim(2)), long(rows.dim(0)), long(negative_rows.dim(0)),
              long(skip), median(steps),
              repeat ? "true" : "false", long(nonfinite({first})), json_list(steps).c_str());
  std::fflush(stdout);
}

size_t safetensors_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path);
  fs::path dir = path;
  if (fs::exists(dir / "model_index.json")) dir /= "transformer";
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") n += e.file_size();
  return n;
}

std::string device_text(Device d) {
#ifdef TF_HAVE_CUDA
  if (d == Device::CUDA) return cuda::device_description();
#endif
  return device_name(d);
}

int run(int argc, char** argv) {
  const Flags f = parse_flags(argc, argv);
  const std::vector<int64_t> sizes = parse_sizes(f.sizes);
  const Device dev = select_device(f.device);

  const auto t0 = Clock::now();
  const moss_image::Transformer tr = moss_image::Transformer::load(f.model, LoadOptions{.device = dev});
  const double load_s = seconds_since(t0);
  const moss_image::TransformerConfig& c = tr.config();
  std::fprintf(stderr, "%s: %s\n", kTool, c.summary().c_str());
  // the negative branch skips block 22 of the released 42 (the pipeline's default), the middle block otherwise
  const int64_t skip = c.layers == 42 ? 22 : c.layers / 2;
  std::printf("{\"impl\": \"tensorfold\", \"kind\": \"load\", \"device\": \"%s\", \"load_s\": %.3f, "
              "\"checkpoint_bytes\": %zu, \"released\": %s, \"dim\": %ld, \"layers\": %ld, \"heads\": %ld, "
              "\"ffn_dim\": %ld, \"text_dim\": %ld, \"latent_channels\": %ld, \"freq_dim\": %ld, "
              "\"text_blocks\": %ld, \"skip_layer\": %ld}\n",
              device_text(dev).c_str(), load_s, safetensors_bytes(f.model), c.is_released_geometry() ? "true" : "false",
              long(c.dim), long(c.layers), long(c.heads), long(c.ffn_dim), long(c.text_dim), long(c.latent_channels),
              long(c.freq_dim), long(c.text_blocks), long(skip));
  std::fflush(stdout);

  for (int64_t size : sizes) {
    const int64_t h = size / kPixelsPerLatent, w = h;
    std::mt19937 gen(static_cast<uint32_t>(size));  // each size's inputs independent of the other sizes run
    const Tensor latents = random_latents(c.latent_channels, h, w, gen);
    const moss_image::TransformerSample cond{latents, random_rows(f.text, c.text_dim, gen), {}};
    const moss_image::TransformerSample uncond{latents, random_rows(f.uncond_text, c.text_dim, gen), {skip}};
    time_case(tr, "forward", size, {cond}, f.reps, "");
    time_case(tr, "guidance", size, {cond, uncond}, f.reps,
              ", \"uncond_text\": " + std::to_string(f.uncond_text) + ", \"skip_layer\": " + std::to_string(skip));
    if (dev != Device::CPU)
      time_sampler_step(tr, size, latents, cond.rows, uncond.rows, skip, std::max(1, f.reps / 2));
  }
  const std::string peak = peak_memory_line(dev);
  if (!peak.empty()) std::fprintf(stderr, "%s: %s\n", kTool, peak.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", kTool, e.what());
    return 1;
  }
}
