// The VAE's config.json, loaded with the embedded tiny VAE's weights: a clear error (bad config,
// or weights that do not fit it) or a VAE whose derived sizes are sane.
#include <filesystem>

#include "families/flux2_vae/config.h"
#include "families/flux2_vae/model.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = tf::fuzz::component_with_tiny_weights("vae");
  tf::fuzz::write_file(dir + "/config.json", data, size);
  try {
    tf::flux2_vae::Config c = tf::flux2_vae::load_config(dir);
    (void)c.summary();
    if (c.downscale() < 1 || c.picture_multiple() < 1 || c.token_width() < 1) __builtin_trap();
    auto vae = tf::flux2_vae::Vae::load(dir, tf::Device::CPU);
    (void)vae.config().summary();
  } catch (const tf::Error&) {
  }
  return 0;
}
