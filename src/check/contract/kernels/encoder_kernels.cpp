#include "check/contract/kernels/encoder_ops.h"
#include "check/contract/kernels/kernels.h"

namespace tf::contract {

SeqOffsets offsets_from(const Params& p, size_t from) {
  SeqOffsets o;
  for (size_t i = from; i < p.size(); ++i) o.push_back(static_cast<int64_t>(p[i]));
  return o;
}

void append_offsets(Params& p, const SeqOffsets& o) {
  for (int64_t x : o) p.push_back(static_cast<double>(x));
}

std::string offsets_label(const SeqOffsets& o) {
  std::string s = "seqs{";
  for (size_t i = 0; i < o.size(); ++i) s += (i ? "," : "") + std::to_string(o[i]);
  return s + "}";
}

// The moss_image encoder's ops; the flag says whether the op has a CUDA kernel in this tree.
void register_encoder_kernels() {
  register_copies(true);
  register_linear(true);
  register_linear_silu_gated_product(true);
  register_rms_norm(true);
  register_residual_add(true);
  register_elementwise_gates(true);
  register_causal_conv1d_silu(true);
  register_delta_net_prep(true);
  register_causal_conv1d_silu_delta_net_prep(true);
  register_gated_delta_rule(true);
  register_gated_delta_rule_chunked(true);
  register_rms_norm_gated(true);
  register_rope_tables();
  register_rope(true);
  register_attention_query_key_prep(true);
  register_attention_bf16(true);
}

}  // namespace tf::contract
