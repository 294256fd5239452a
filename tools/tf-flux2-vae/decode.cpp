// tf-flux2-vae decode: latents (or normalised tokens) -> picture.
#include <chrono>
#include <cstdio>

#include "backend/device/device.h"
#include "common/command.h"
#include "common/memory_limit.h"
#include "common/tensor_file.h"
#include "core/error.h"
#include "families/common/progress.h"
#include "families/flux2_vae/memory.h"
#include "families/flux2_vae/model.h"
#include "families/flux2_vae/pixels.h"
#include "families/flux2_vae/tokens.h"
#include "io/png.h"
#include "io/safetensors.h"

namespace {

tf::tools::RegisterCommand reg("decode", "latents or feature2 tokens -> picture", [](CLI::App& c) {
  auto model = std::make_shared<std::string>(), latents = std::make_shared<std::string>(),
       tokens = std::make_shared<std::string>(), out = std::make_shared<std::string>(),
       device = std::make_shared<std::string>("cpu");
  auto height = std::make_shared<int64_t>(0), width = std::make_shared<int64_t>(0);
  auto max_memory = std::make_shared<double>(0);
  c.add_option("--model", *model, "pipeline folder or its vae/ folder")->required();
  auto* l = c.add_option("--latents", *latents,
                         "safetensors with `latents` F32 [Cz, H/8, W/8] (the posterior's space; a leading 1 accepted)");
  auto* t = c.add_option("--tokens", *tokens,
                         "safetensors with `tokens` (or `feature2`) F32 [H*W/256 (+5 zero rows), 4 Cz], normalised");
  l->excludes(t);
  t->excludes(l);
  c.add_option("--height", *height, "picture height (with --tokens)");
  c.add_option("--width", *width, "picture width (with --tokens)");
  c.add_option("--out", *out, "output PNG")->required();
  c.add_option("--device", *device, "cpu or cuda");
  tf::tools::add_max_memory_flag(c, max_memory);
  return [=]() -> int {
    if (latents->empty() == tokens->empty()) tf::fail("give one of --latents FILE or --tokens FILE");
    if (!tokens->empty() && (*height > tf::kMaxPngSide || *width > tf::kMaxPngSide))
      tf::fail("--height/--width: a " + std::to_string(*width) + "x" + std::to_string(*height) +
               " picture is refused: each side must be at most " + std::to_string(tf::kMaxPngSide));
    const tf::Device dev = tf::select_device(*device);
    const auto vae = tf::flux2_vae::Vae::load(*model, dev, {false, true});
    const auto& cfg = vae.config();
    std::fprintf(stderr, "%s\n", cfg.summary().c_str());
    tf::Tensor z;
    if (!latents->empty()) {
      z = tf::tools::read_tensor("--latents", *latents, "latents", true);  // [1, Cz, h, w] as diffusers writes it too
      if (z.dtype != tf::DType::F32 || z.rank() != 3 || z.dim(0) != cfg.latent_channels)
        tf::fail(*latents + ": tensor \"latents\" is " + z.describe() + ", expected F32 [" +
                 std::to_string(cfg.latent_channels) + ", H/8, W/8]");
      const int64_t d = cfg.downscale(), limit = tf::kMaxPngSide / d;
      if (z.dim(1) > limit || z.dim(2) > limit)
        tf::fail(*latents + ": tensor \"latents\" is " + z.describe() + ", which decodes to a " +
                 std::to_string(z.dim(2) * d) + "x" + std::to_string(z.dim(1) * d) +
                 " picture; each side must be at most " + std::to_string(tf::kMaxPngSide) + " (latents at most " +
                 std::to_string(limit) + " on a side)");
      tf::flux2_vae::require_memory_for(tf::flux2_vae::Direction::Decode, cfg, z.dim(2) * d, z.dim(1) * d, dev,
                                        tf::tools::memory_limit(dev, *max_memory), "--latents " + *latents);
    } else {
      const int64_t m = cfg.picture_multiple(), d = cfg.downscale();
      if (*height <= 0 || *width <= 0 || *height % m || *width % m)
        tf::fail("--height and --width (with --tokens) must be positive multiples of " + std::to_string(m));
      tf::flux2_vae::require_memory_for(tf::flux2_vae::Direction::Decode, cfg, *width, *height, dev,
                                        tf::tools::memory_limit(dev, *max_memory), "--height/--width");
      const auto f = tf::SafetensorsFile::open(*tokens);
      const char* name = f->has("tokens") ? "tokens" : "feature2";
      if (!f->has(name)) tf::fail(*tokens + ": no tensor \"tokens\" or \"feature2\"");
      try {
        z = tf::flux2_vae::latents_from_tokens(f->get(name), *height / d, *width / d, vae.weights().bn_mean,
                                               vae.weights().bn_var, cfg.batch_norm_eps);
      } catch (const tf::Error& e) {
        tf::fail(*tokens + ": " + e.what());
      }
    }
    const tf::Progress progress = tf::terminal_progress("decode");
    const auto t0 = std::chrono::steady_clock::now();
    const tf::Tensor pic = vae.decode(z, progress);
    const auto t1 = std::chrono::steady_clock::now();
    tf::write_png_rgb8(*out, tf::flux2_vae::output_to_picture(pic));
    std::fprintf(stderr, "picture %lldx%lld -> %s (decode %.2f s on %s)\n", static_cast<long long>(pic.dim(2)),
                 static_cast<long long>(pic.dim(1)), out->c_str(), std::chrono::duration<double>(t1 - t0).count(),
                 tf::device_name(dev));
    if (const std::string m = tf::peak_memory_line(dev); !m.empty()) std::fprintf(stderr, "%s\n", m.c_str());
    return 0;
  };
});

}  // namespace
