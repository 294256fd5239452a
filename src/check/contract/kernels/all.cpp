#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

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

Case with_equal_keys(Case c) {
  std::vector<double> kv = values_of(c.inputs[1]);
  for (size_t i = 8; i < kv.size(); ++i) kv[i] = kv[i % 8];
  set_values(c.inputs[1], kv);
  c.label = "equal keys " + c.label;
  return c;
}

void register_every_kernel() {
  register_linear(true);
  register_linear_gated_product(true);
  register_rms_norm(true);
  register_rms_norm_gated(true);
  register_group_norm(true);
  register_residual_add(true);
  register_add(true);
  register_elementwise_gates(true);
  register_modulation(true);
  register_copies(true);
  register_rope_tables();
  register_rope(true);
  register_attention_query_key_prep(true);
  register_attention_bf16(true);
  register_attention_f32_channels(true);
  register_attention_fused(true);
  register_qkv_norm_rope(true);
  register_timestep_sinusoid(true);
  register_sampling(true);
  register_causal_conv1d_silu(true);
  register_conv2d(true);
  register_conv2d_group_stats(true);
  register_upsample_nearest2x(true);
  register_upsample_nearest2x_conv2d(true);
  register_delta_net_prep(true);
  register_causal_conv1d_silu_delta_net_prep(true);
  register_gated_delta_rule(true);
  register_gated_delta_rule_chunked(true);
}

}  // namespace tf::contract
