#pragma once
// The moss_image encoder ops' contract registrations; `cuda` says whether the op has a CUDA kernel.
#include "backend/seq_offsets.h"
#include "check/contract/kernel_contract.h"

namespace tf::contract {

void register_linear(bool cuda);
void register_rms_norm_zero_centred(bool cuda);
void register_residual_add(bool cuda);
void register_elementwise_gates(bool cuda);  // silu_gated_product, sigmoid_gate
void register_copies(bool cuda);             // embedding, split_query_gate
void register_causal_conv1d_silu(bool cuda);
void register_delta_net_prep(bool cuda);
void register_gated_delta_rule(bool cuda);
void register_gated_delta_rule_chunked(bool cuda);
void register_rms_norm_gated(bool cuda);
void register_rope_partial(bool cuda);
void register_attention_causal_gqa(bool cuda);
void register_rope_tables();  // host only

// A residual add's d as its reference sees it: BF16 values, or a product's F32 k-share sums [P, rows, n]
// added in order and rounded to bf16 (residual_add.cpp). The faulty form for controls: the sum left
// unrounded, or its last share dropped.
std::vector<Tracked> residual_delta_reference(const Tensor& d);
std::vector<double> residual_delta_faulty(const Tensor& d, bool round_sum, bool drop_last);

// Packed sequences travel in a case's params from index `from` on (as cu_seqlens).
SeqOffsets offsets_from(const Params& p, size_t from);
void append_offsets(Params& p, const SeqOffsets& o);
std::string offsets_label(const SeqOffsets& o);

}  // namespace tf::contract
