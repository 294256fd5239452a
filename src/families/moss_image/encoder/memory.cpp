#include "families/moss_image/encoder/memory.h"

#include <algorithm>
#include <cstdio>

#include "backend/linear/linear.h"
#include "core/error.h"

namespace tf::moss_image {

MemoryEstimate encoder_memory(const EncoderConfig& c, int64_t tokens) {
  const double bf = 2, f32 = 4, H = double(c.hidden);
  // Held across each layer: h and its norm x; the ids and the RoPE tables (cos, sin F32); on the
  // CPU the final rows and each prompt's own copy of them.
  const double base = 2 * bf * H + 2 * 4 + 2 * f32 * double(c.rotary_dim) + 2 * bf * H;
  // DeltaNet (every buffer counted as if alive together): mixed, z, b, a, conv (the CPU's, inside
  // causal_conv1d_silu_delta_net_prep), q, k (F32), v (F32), beta, g (F32), o, normed, out.
  // A residual add's product (out / o, down): bf16 rows, or on CUDA up to 8 fp32 k-share sums a row
  // where it offers them, at kLinearPackedRows rows or fewer (backend/linear/linear.h).
  const double out = tokens <= kLinearPackedRows ? 8 * f32 * H : bf * H;
  const double hv_dv = double(c.lin_value_heads * c.lin_value_dim), hk_dk = double(c.lin_key_heads * c.lin_key_dim);
  const double conv = double(c.conv_channels());
  const double delta = bf * conv + bf * hv_dv + 2 * bf * double(c.lin_value_heads) + bf * conv + 2 * f32 * hk_dk +
                       f32 * hv_dv + 2 * f32 * double(c.lin_value_heads) + bf * hv_dv + bf * hv_dv + out;
  // Gated attention: qg, query, gate, kraw, v, q, k, o, out.
  const double hq_d = double(c.attn_heads * c.head_dim), hkv_d = double(c.kv_heads * c.head_dim);
  const double attention = bf * 2 * hq_d + 2 * bf * hq_d + 2 * bf * hkv_d + bf * hq_d + bf * hkv_d + bf * hq_d + out;
  // MLP: the gated product, and gate and up where linear_gated_product makes them (the CPU,
  // CUDA outside the streaming kernel), out.
  const double mlp = 3 * bf * double(c.intermediate) + out;
  MemoryEstimate e;
  double per_token = delta;
  e.peak = "DeltaNet";
  if (c.full_attention_layers() > 0 && attention > per_token) {
    per_token = attention;
    e.peak = "attention";
  }
  if (mlp > per_token) {
    per_token = mlp;
    e.peak = "MLP";
  }
  e.bytes = kAllocatorSlack * double(tokens) * (base + per_token) + kWorkspaceBytes;
  return e;
}

void require_memory_for_tokens(const EncoderConfig& c, int64_t tokens, const AvailableMemory& have,
                               const std::string& what) {
  const MemoryEstimate need = encoder_memory(c, tokens);
  if (need.bytes <= double(have.bytes)) return;
  // the most tokens that fit: the estimate is affine in the token count
  const double per_token = tokens > 0 ? (need.bytes - encoder_memory(c, 0).bytes) / double(tokens) : 0.0;
  const double room = double(have.bytes) - encoder_memory(c, 0).bytes;
  const int64_t fit = room > 0 && per_token > 0 ? int64_t(room / per_token) : 0;
  require_memory({need.bytes, "the " + need.peak}, have, what, "a forward of " + std::to_string(tokens) + " tokens",
                 "use shorter prompts" + (fit > 0 ? " (about " + std::to_string(fit) + " tokens fit)" : std::string()));
}

}  // namespace tf::moss_image
