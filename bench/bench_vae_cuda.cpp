// Times TensorFold's FLUX.2 VAE on the GPU through the family (the same stages the tools run):
// encode = picture -> moments, decode = latents -> picture, device-resident, median of --reps
// after one warm-up; prints one JSON line per run with the median, the warm-up's time (first_ms:
// the pool's growth and first launches, as a fresh process's first picture pays them) and the peak
// GPU memory.
// bench/vae_vs_torch runs it beside diffusers on the same weights.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/device/device.h"
#include "core/error.h"
#include "families/flux2_vae/model.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/runtime.h"
#endif

namespace {

#ifdef TF_HAVE_CUDA
tf::Tensor random_device(tf::Shape shape, float lo, float hi, uint64_t seed) {
  tf::Tensor h = tf::empty(tf::DType::F32, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < h.numel(); ++i) h.ptr<float>()[i] = d(rng);
  return tf::to_device(h, tf::Device::CUDA);
}

// FNV-1a of the output's bytes: the same bytes from two builds or two runs give the same hash.
uint64_t bytes_hash(const tf::Tensor& y) {
  const tf::Tensor h = tf::to_device(y, tf::Device::CPU);
  const auto* p = static_cast<const unsigned char*>(h.data);
  uint64_t v = 1469598103934665603ull;
  for (size_t i = 0; i < h.nbytes(); ++i) v = (v ^ p[i]) * 1099511628211ull;
  return v;
}

// One encode or decode as the model runs it (its stages handing on their outputs' GroupNorm statistics).
double time_ms(const tf::flux2_vae::Vae& vae, bool encode, const tf::Tensor& x, uint64_t* hash = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  tf::Tensor y = encode ? vae.run_encoder(x) : vae.run_decoder(x);
  tf::cuda::synchronize("VAE stages");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (hash) *hash = bytes_hash(y);
  return ms;
}
#endif

int run(int argc, char** argv) {
  CLI::App app{"Times TensorFold's FLUX.2 VAE on the GPU (encode and decode, median of --reps)", "bench_vae_cuda"};
  std::string model;
  std::vector<int64_t> picture_sizes = {512, 1024, 2048};
  int64_t reps = 5;
  std::string what = "both";
  double reserve_gib = 0;
  app.add_option("--model", model, "the VAE's folder (diffusers layout)")->required();
  app.add_option("--sizes", picture_sizes, "square picture sizes, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(int64_t(16), int64_t(16384)));
  app.add_option("--reps", reps, "timed runs after one warm-up")->check(CLI::Range(int64_t(1), int64_t(1000)));
  app.add_option("--reserve-gib", reserve_gib, "allocate and free this much GPU memory first (the pool keeps it)")
      ->check(CLI::Range(0.0, 1024.0));
  app.add_option("--what", what, "encode, decode or both")->check(CLI::IsMember({"encode", "decode", "both"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
#ifndef TF_HAVE_CUDA
  tf::fail("this build has no CUDA backend");
#else
  const tf::Device dev = tf::select_device("cuda");
  const auto vae = tf::flux2_vae::Vae::load(model, dev);
  std::fprintf(stderr, "%s on %s\n", vae.config().summary().c_str(), tf::cuda::device_description().c_str());
  if (reserve_gib > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    { const tf::Tensor r = tf::empty(tf::DType::U8, {int64_t(reserve_gib * double(1ull << 30))}, dev); }
    tf::cuda::synchronize("reserve");
    std::fprintf(stderr, "reserved %.2f GiB in %.1f ms\n", reserve_gib,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  for (const int64_t s : picture_sizes) {
    const int64_t cz = vae.config().latent_channels;
    const tf::Tensor x = random_device({3, s, s}, -1.f, 1.f, 1);
    const tf::Tensor z = random_device({cz, s / 8, s / 8}, -2.f, 2.f, 2);
    for (int which = 0; which < 2; ++which) {
      if (what != "both" && what != (which == 0 ? "encode" : "decode")) continue;
      const tf::Tensor& in = which == 0 ? x : z;
      tf::cuda::reset_peak_memory();
      uint64_t hash = 0;
      const double first = time_ms(vae, which == 0, in, &hash);  // warm-up: pool and module loads
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) t.push_back(time_ms(vae, which == 0, in));
      std::sort(t.begin(), t.end());
      const auto m = tf::cuda::memory_stats();
      std::printf("{\"impl\": \"tensorfold\", \"size\": %lld, \"what\": \"%s\", \"median_ms\": %.3f, \"min_ms\": %.3f, "
                  "\"max_ms\": %.3f, \"first_ms\": %.3f, \"peak_gib\": %.3f, \"out_hash\": \"%016llx\"}\n",
                  static_cast<long long>(s), which == 0 ? "encode" : "decode", t[t.size() / 2], t.front(), t.back(), first,
                  double(m.peak_in_use) / double(1ull << 30), static_cast<unsigned long long>(hash));
      std::fflush(stdout);
    }
  }
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_vae_cuda: error: %s\n", e.what());
    return 1;
  }
}
