// tf-flux2-vae encode: picture -> Idol's feature2 (F32 [5 + H*W/256, 128]).
#include <chrono>
#include <cstdio>

#include "backend/device/device.h"
#include "common/command.h"
#include "common/memory_limit.h"
#include "core/error.h"
#include "families/common/progress.h"
#include "families/flux2_vae/memory.h"
#include "families/flux2_vae/model.h"
#include "families/flux2_vae/pixels.h"
#include "io/png.h"
#include "io/safetensors.h"

namespace {

tf::tools::RegisterCommand reg("encode", "picture -> Idol's feature2 tokens", [](CLI::App& c) {
  auto model = std::make_shared<std::string>(), image = std::make_shared<std::string>(),
       noise = std::make_shared<std::string>(), out = std::make_shared<std::string>(),
       device = std::make_shared<std::string>("cpu");
  auto mean = std::make_shared<bool>(false), save_latents = std::make_shared<bool>(false);
  auto max_memory = std::make_shared<double>(0);
  c.add_option("--model", *model, "pipeline folder or its vae/ folder")->required();
  c.add_option("--image", *image, "8-bit PNG, sides multiples of 16")->required();
  auto* n = c.add_option("--noise", *noise, "safetensors with `noise` F32 [Cz, H/8, W/8] (Idol's posterior sample)");
  auto* m = c.add_flag("--mean", *mean, "use the posterior mean (the FLUX.2 pipeline's choice)");
  n->excludes(m);
  m->excludes(n);
  c.add_option("--out", *out, "output safetensors (`feature2`)")->required();
  c.add_flag("--save-latents", *save_latents, "also write `latents` F32 [Cz, H/8, W/8]");
  c.add_option("--device", *device, "cpu or cuda");
  tf::tools::add_max_memory_flag(c, max_memory);
  return [=]() -> int {
    if (noise->empty() && !*mean) tf::fail("give --noise FILE (Idol's posterior sample) or --mean");
    const tf::Device dev = tf::select_device(*device);
    const auto t0 = std::chrono::steady_clock::now();
    const auto vae = tf::flux2_vae::Vae::load(*model, dev, {true, false});
    const auto& cfg = vae.config();
    std::fprintf(stderr, "%s\n", cfg.summary().c_str());
    // sized from the header before any pixel memory: an absurd picture is refused by name
    const tf::PictureSize size = tf::read_png_size(*image);
    tf::flux2_vae::require_memory_for(tf::flux2_vae::Direction::Encode, cfg, size.width, size.height, dev,
                                      tf::tools::memory_limit(dev, *max_memory), "--image " + *image);
    std::string conversion;
    const tf::RgbImage img = tf::read_png_rgb8(*image, &conversion);
    if (!conversion.empty()) std::fprintf(stderr, "%s: converted %s\n", image->c_str(), conversion.c_str());
    const tf::Tensor x = tf::flux2_vae::picture_to_input(img, cfg.picture_multiple(), *image);
    tf::Tensor noise_t;
    if (!noise->empty()) {
      const auto f = tf::SafetensorsFile::open(*noise);
      if (!f->has("noise")) tf::fail(*noise + ": no tensor \"noise\"");
      noise_t = f->get("noise");
      const int64_t d = cfg.downscale();
      tf::expect_tensor(noise_t, *noise, "noise", tf::DType::F32, {cfg.latent_channels, img.height / d, img.width / d});
    }
    const tf::Progress progress = tf::terminal_progress("encode");
    const auto t1 = std::chrono::steady_clock::now();
    const auto e = vae.encode(x, noise->empty() ? nullptr : &noise_t, progress);
    const auto t2 = std::chrono::steady_clock::now();
    tf::NamedTensors outs{{"feature2", e.feature2}};
    if (*save_latents) outs.push_back({"latents", e.latents});
    tf::write_safetensors(*out, outs, {{"posterior", *mean ? "mean" : "sample"}});
    std::fprintf(stderr, "feature2 [%lld, %lld] -> %s (load %.2f s, encode %.2f s on %s)\n",
                 static_cast<long long>(e.feature2.dim(0)), static_cast<long long>(e.feature2.dim(1)), out->c_str(),
                 std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                 tf::device_name(dev));
    if (const std::string m = tf::peak_memory_line(dev); !m.empty()) std::fprintf(stderr, "%s\n", m.c_str());
    return 0;
  };
});

}  // namespace
