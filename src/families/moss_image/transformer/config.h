#pragma once
// The MOSS-Image transformer's geometry: transformer/config.json (MOSSImageTransformer), or read
// from the tensor shapes of a single-file export. Any geometry the kernels can run loads; the rest
// is refused by name (docs/perf/transformer/references.md, "Geometry").
#include <cstdint>
#include <string>

namespace tf {
class Checkpoint;
}

namespace tf::moss_image {

struct TransformerConfig {
  // From config.json.
  int64_t dim = 0, layers = 0, heads = 0, ffn_dim = 0, text_dim = 0, latent_channels = 0, freq_dim = 0;
  double rope_base = 1e4;
  // Derived, or fixed by the code (not in the config).
  int64_t head_dim = 0;    // dim / heads
  int64_t text_blocks = 2;
  int64_t rope_axes = 4;   // (r, t, h, w)
  int64_t rope_bands = 0;  // head_dim / 8: 4 axes of it fill the split half of each head
  double eps = 1e-6;       // every RMSNorm
  std::string source;      // the config.json, or the file whose shapes gave the geometry

  // The released MOSS-Image-Base geometry: 3072 / 42 layers / 24 heads / ffn 8192 / text 4096 /
  // 128 latent channels / freq 256 / rope base 1e4.
  static TransformerConfig released();
  bool is_released_geometry() const;
  std::string summary() const;  // one line: geometry, and whether it is the released one
};

// Sets head_dim and rope_bands from the sizes and refuses what the kernels cannot run; errors start
// with `where` and name the key.
void finish_transformer_config(TransformerConfig& c, const std::string& where);

// `dir`: the transformer folder; reads <dir>/config.json. Errors name the file and the key.
TransformerConfig load_transformer_config(const std::string& dir);

// The geometry from the shapes of a checkpoint whose keys carry `prefix` (dim and latent_channels
// from video_embedder.weight, layers from the largest layers.N, head_dim from layers.0.q_norm.weight,
// ffn_dim from layers.0.proj.ffn_down.weight, text_dim from text_embedder.proj.weight, freq_dim from
// time_embedding.0.weight); rope_base is 1e4. The same refusals as config.json.
TransformerConfig infer_transformer_config(const Checkpoint& ckpt, const std::string& prefix);

}  // namespace tf::moss_image
