#pragma once
// The encoder's geometry, read from the text encoder's config.json (`text_config` of a qwen3_5
// config, or the top level of a bare text config). Any consistent geometry loads; what the kernels
// cannot run is refused by name.
#include <cstdint>
#include <string>
#include <vector>

namespace tf::moss_image {

struct EncoderConfig {
  int64_t vocab_size = 0, hidden = 0, intermediate = 0, layers = 0;
  // Gated full attention.
  int64_t attn_heads = 0, kv_heads = 0, head_dim = 0, rotary_dim = 0;
  double rope_theta = 0;
  // Gated DeltaNet.
  int64_t lin_key_heads = 0, lin_value_heads = 0, lin_key_dim = 0, lin_value_dim = 0, conv_kernel = 0;
  double rms_norm_eps = 1e-6;
  int64_t max_positions = 0;  // max_position_embeddings: the longest prompt the model takes
  std::string source;         // the config.json it came from, for errors
  std::vector<bool> full_attention;  // per layer: full attention, else Gated DeltaNet

  int64_t conv_channels() const { return 2 * lin_key_heads * lin_key_dim + lin_value_heads * lin_value_dim; }
  int64_t full_attention_layers() const;
  bool is_released_geometry() const;  // Qwen3.5-9B's text model, as MOSS-Image-Base ships it
  std::string summary() const;        // one line: geometry, and whether it is the released one
};

// `path`: config.json; errors name the file and the key.
EncoderConfig load_encoder_config(const std::string& path);

// The released Qwen3.5-9B text geometry (for random checkpoints and tests).
EncoderConfig released_encoder_config();

}  // namespace tf::moss_image
