// The C++ calls that tensorfold's Python classes wrap, timed as bench/python_overhead/overhead.py
// times the Python ones (median of --reps after 3 warm-ups, wall clock to the end of the GPU work):
//   encode: PromptEncoder::encode of one prompt (tokenize, the memory check, forward, rows on the host);
//   decode: the memory check, then Vae::decode_on_device of F32 latents [Cz, s/8, s/8] on the GPU.
// One JSON line each.
//   bench_python_peer --model PIPE --prompt TEXT [--size 1024] [--reps 15]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "backend/device/device.h"
#include "core/error.h"
#include "core/tensor.h"
#include "families/flux2_vae/memory.h"
#include "families/flux2_vae/model.h"
#include "families/moss_image/encoder/memory.h"
#include "families/moss_image/encoder/prompt_encoder.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/runtime.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;

#ifdef TF_HAVE_CUDA
double median_ms(const std::function<void()>& f, int reps) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
#endif

int run(int argc, char** argv) {
  CLI::App app{"Times the C++ calls tensorfold's Python package wraps (its overhead's peer)", "bench_python_peer"};
  std::string model, prompt;
  int64_t size = 1024;
  int reps = 15;
  app.add_option("--model", model, "a pipeline folder (text_encoder/, tokenizer/, vae/)")->required();
  app.add_option("--prompt", prompt, "the prompt to encode")->required();
  app.add_option("--size", size, "the decoded picture's side")->check(CLI::Range(int64_t(16), int64_t(8192)));
  app.add_option("--reps", reps, "timed calls after 3 warm-ups")->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
#ifndef TF_HAVE_CUDA
  tf::fail("this build has no CUDA backend");
#else
  const tf::Device dev = tf::select_device("cuda");
  {
    const auto vae = tf::flux2_vae::Vae::load(model, dev);
    const auto& c = vae.config();
    const int64_t d = c.downscale();
    std::vector<float> host(static_cast<size_t>(c.latent_channels * (size / d) * (size / d)));
    for (size_t i = 0; i < host.size(); ++i) host[i] = float(int64_t(i * 2654435761u % 4001) - 2000) / 1000.f;
    tf::Tensor zh = tf::empty(tf::DType::F32, {c.latent_channels, size / d, size / d});
    std::copy(host.begin(), host.end(), zh.ptr<float>());
    const tf::Tensor z = tf::to_device(zh, dev);
    const double ms = median_ms([&] {
      tf::flux2_vae::require_memory_for(tf::flux2_vae::Direction::Decode, c, size, size, dev, tf::available_memory(dev),
                                        "latents");
      const tf::Tensor pics = vae.decode_on_device(z);
      tf::cuda::synchronize("decode");
    }, reps);
    std::printf("{\"impl\": \"c++\", \"what\": \"decode\", \"size\": %lld, \"median_ms\": %.3f}\n",
                static_cast<long long>(size), ms);
    std::fflush(stdout);
  }
  const auto enc = tf::moss_image::PromptEncoder::load(model, {dev, true});
  const int64_t tokens = static_cast<int64_t>(enc.tokenize(prompt, true).size());
  const double ms = median_ms([&] {
    const auto have = tf::available_memory(dev);
    const auto out = enc.encode({prompt}, {}, [&](int64_t n) {
      tf::moss_image::require_memory_for_tokens(enc.encoder().config(), n, have, "prompts");
    });
  }, reps);
  std::printf("{\"impl\": \"c++\", \"what\": \"encode\", \"tokens\": %lld, \"median_ms\": %.3f}\n",
              static_cast<long long>(tokens), ms);
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_python_peer: error: %s\n", e.what());
    return 1;
  }
}
