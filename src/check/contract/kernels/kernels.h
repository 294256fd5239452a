#pragma once
// Each kernel's contract lives in its own file here, grouped by subject as backend/ is; its
// registration function adds it (tagged with the families that use it). `cuda` says whether the op
// has a CUDA kernel in this tree.
namespace tf::contract {

void register_linear(bool cuda);
void register_linear_gated_product(bool cuda);
void register_rms_norm(bool cuda);
void register_rms_norm_gated(bool cuda);
void register_group_norm(bool cuda);
void register_residual_add(bool cuda);
void register_sampling(bool cuda);
void register_add(bool cuda);
void register_elementwise_gates(bool cuda);  // silu_gated_product, sigmoid_gate
void register_modulation(bool cuda);  // modulate, silu, situ_gated_product
void register_copies(bool cuda);             // embedding, split_query_gate
void register_rope_tables();  // host only
void register_rope(bool cuda);
void register_attention_query_key_prep(bool cuda);
void register_attention_bf16(bool cuda);
void register_attention_f32_channels(bool cuda);
void register_attention_fused(bool cuda);
void register_qkv_norm_rope(bool cuda);
void register_timestep_sinusoid(bool cuda);
void register_causal_conv1d_silu(bool cuda);
void register_conv2d(bool cuda);
void register_conv2d_group_stats(bool cuda);
void register_upsample_nearest2x(bool cuda);
void register_upsample_nearest2x_conv2d(bool cuda);
void register_delta_net_prep(bool cuda);
void register_causal_conv1d_silu_delta_net_prep(bool cuda);
void register_gated_delta_rule(bool cuda);
void register_gated_delta_rule_chunked(bool cuda);

// Every registration above, in this order (linear, norm, elementwise, embed, rope, attention, conv, delta rule).
void register_every_kernel();

}  // namespace tf::contract
