// The text encoder's config.json, loaded with the embedded tiny encoder's weights: a clear error
// (bad config, or weights that do not fit it) or a geometry whose derived sizes are sane.
#include "families/moss_image/encoder/config.h"
#include "families/moss_image/encoder/weights.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = tf::fuzz::component_with_tiny_weights("text_encoder");
  tf::fuzz::write_file(dir + "/config.json", data, size);
  try {
    tf::moss_image::EncoderConfig c = tf::moss_image::load_encoder_config(dir + "/config.json");
    (void)c.summary();
    if (c.conv_channels() < 1 || c.full_attention_layers() > c.layers ||
        static_cast<int64_t>(c.full_attention.size()) != c.layers)
      __builtin_trap();
    auto w = tf::moss_image::load_encoder_weights(dir, c, {});
    if (static_cast<int64_t>(w.layers.size()) != c.layers) __builtin_trap();
  } catch (const tf::Error&) {
  }
  return 0;
}
