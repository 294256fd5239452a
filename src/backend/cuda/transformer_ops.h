#pragma once
// The CUDA kernels behind backend/<op>.h (the same signatures as tf::cpu's); the dispatchers check
// geometry first, so these trust their arguments. Rounding points are documented on each op's
// backend header; sums run in fp32 in a fixed order per output, so repeats are byte-identical.
#include "backend/seq_offsets.h"
#include "core/tensor.h"

namespace tf::cuda {

void embedding(const Tensor& table, const Tensor& ids, Tensor& out);
void rms_norm_zero_centred(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void residual_add_rms_norm_zero_centred(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y);
void residual_add(Tensor& h, const Tensor& d);
void linear(const Tensor& x, const Tensor& w, Tensor& y);
void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y);
void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y);
void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);
void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o);
void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y);
void rope_partial(const Tensor& x, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& y);
void attention_causal_gqa(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                          const SeqOffsets& seq_offsets, Tensor& o);
void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y);
void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate);

}  // namespace tf::cuda
