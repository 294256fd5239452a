#include "families/moss_image/transformer/memory.h"

#include <algorithm>

namespace tf::moss_image {

double transformer_weight_bytes(const TransformerConfig& c) {
  const double D = double(c.dim), F = double(c.ffn_dim), bf = 2;
  // A joint block: q|k|v, o, up|gate, down, q/k norms; the text blocks the same at the text width
  // (they run at dim); embedders, time MLP, modulations and the head.
  const double block = 4 * D * D + 3 * F * D + 2 * double(c.head_dim);
  const double outer = double(c.text_dim) * D + double(c.latent_channels) * D + double(c.freq_dim) * D + D * D +
                       6 * D * D + 2 * D * D + D * double(c.latent_channels);
  return bf * (double(c.layers + c.text_blocks) * block + outer);
}

MemoryEstimate transformer_memory(const TransformerConfig& c, const std::vector<int64_t>& image_tokens,
                                  const std::vector<int64_t>& text_tokens) {
  double tokens = 0;
  for (size_t i = 0; i < image_tokens.size(); ++i)
    tokens += double(image_tokens[i]) + double(i < text_tokens.size() ? text_tokens[i] : 0);
  const double bf = 2, f32 = 4, D = double(c.dim), F = double(c.ffn_dim);
  // Held across a block: the stream x, its staging in and out (tokens, the head's rows, F32
  // positions) and the fp32 RoPE tables (cos, sin over half the head).
  const double base = 2 * bf * D + 2 * bf * double(c.latent_channels) + 4 * f32 + f32 * double(c.head_dim);
  // Attention: the modulated norm, q|k|v, q, k, v, o, the output product, the gated residual.
  const double attention = bf * D + 3 * bf * D + 3 * bf * D + bf * D + bf * D + bf * D;
  // MLP: the modulated norm, up|gate, the SiTU product, the down product, the gated residual.
  const double mlp = bf * D + 2 * bf * F + bf * F + bf * D + bf * D;
  MemoryEstimate e;
  e.peak = mlp > attention ? "MLP" : "attention";
  e.bytes = kAllocatorSlack * tokens * (base + std::max(mlp, attention)) + kWorkspaceBytes;
  return e;
}

void require_memory_for_pass(const TransformerConfig& c, const std::vector<int64_t>& image_tokens,
                             const std::vector<int64_t>& text_tokens, double resident, const AvailableMemory& have,
                             const std::string& what, const std::string& run) {
  MemoryEstimate need = transformer_memory(c, image_tokens, text_tokens);
  need.bytes += resident;
  if (need.bytes <= double(have.bytes)) return;
  require_memory({need.bytes, "the transformer's " + need.peak + (resident > 0 ? ", weights included" : "")}, have,
                 what, run, "use a smaller picture");
}

}  // namespace tf::moss_image
