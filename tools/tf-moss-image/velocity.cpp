// tf-moss-image velocity: one transformer forward: latents, prompt rows and sigma -> velocity.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "backend/device/device.h"
#include "common/command.h"
#include "common/memory_limit.h"
#include "common/tensor_file.h"
#include "core/error.h"
#include "families/common/progress.h"
#include "families/moss_image/transformer/memory.h"
#include "families/moss_image/transformer/transformer.h"
#include "io/safetensors.h"

namespace {

tf::tools::RegisterCommand reg("velocity", "One transformer forward: latents + prompt rows + sigma -> velocity",
                               [](CLI::App& c) {
  struct Opts {
    std::string model, latents, rows, out, device = "cpu";
    double sigma = 1.0;
    std::vector<int64_t> skip;
  };
  auto o = std::make_shared<Opts>();
  auto max_memory = std::make_shared<double>(0);
  c.add_option("--model", o->model, "pipeline folder, transformer folder or single-file .safetensors")->required();
  c.add_option("--latents", o->latents, "safetensors with `latents` F32 [128, H/16, W/16] (a leading 1 is accepted)")
      ->required();
  c.add_option("--rows", o->rows, "safetensors with `prompt.rows` BF16 [n, 4096], as tf-moss-image encode writes")
      ->required();
  c.add_option("--sigma", o->sigma, "the noise level in [0, 1] (timestep = sigma * 1000); default 1");
  c.add_option("--skip-layer", o->skip, "a joint block to skip (the negative branch skips 22); may repeat");
  c.add_option("--out", o->out, "output .safetensors holding `velocity` F32 [128, H/16, W/16]")->required();
  c.add_option("--device", o->device, "cpu or cuda");
  tf::tools::add_max_memory_flag(c, max_memory);
  return [o, max_memory]() -> int {
    if (!std::isfinite(o->sigma) || o->sigma < 0 || o->sigma > 1)
      tf::fail("--sigma " + std::to_string(o->sigma) + ": expected a noise level in [0, 1]");
    const tf::Device device = tf::select_device(o->device);
    tf::moss_image::TransformerSample s;
    s.latents = tf::tools::read_tensor("--latents", o->latents, "latents", true);
    s.rows = tf::tools::read_tensor("--rows", o->rows, "prompt.rows");
    s.skip_layers = o->skip;
    const auto t0 = std::chrono::steady_clock::now();
    const auto tr = tf::moss_image::Transformer::load(o->model, {device, true});
    const int64_t image = s.latents.dim(1) * s.latents.dim(2);
    tf::moss_image::require_memory_for_pass(tr.config(), {image}, {s.rows.dim(0)}, 0,
                                            tf::tools::memory_limit(device, *max_memory), "--latents " + o->latents,
                                            "a forward of " + std::to_string(image) + " image tokens");
    std::fprintf(stderr, "transformer: %s\n", tr.config().summary().c_str());
    const auto t1 = std::chrono::steady_clock::now();
    const tf::Tensor v = tr.velocity({s}, static_cast<float>(o->sigma), tf::terminal_progress("forward"))[0];
    const auto t2 = std::chrono::steady_clock::now();
    tf::write_safetensors(o->out, {{"velocity", v}}, {{"producer", "tf-moss-image velocity"}, {"sigma", std::to_string(o->sigma)}});
    const std::string peak = tf::peak_memory_line(device);
    std::fprintf(stderr, "load %.2f s, forward %.2f s (%lld image + %lld text tokens)%s\nwrote %s\n",
                 std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                 static_cast<long long>(s.latents.dim(1) * s.latents.dim(2)), static_cast<long long>(s.rows.dim(0)),
                 peak.empty() ? "" : ("; " + peak).c_str(), o->out.c_str());
    return 0;
  };
});

}  // namespace
