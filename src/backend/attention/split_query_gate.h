#pragma once
// Splits gated attention's q_proj output per head into query and gate halves (a copy, no rounding):
// qg viewed [T, heads, 2 * head_dim] -> query [T, heads, head_dim] = first half, gate = second half.
#include "core/tensor.h"

namespace tf {

// qg: BF16 [T, heads * 2 * head_dim]; query, gate: BF16 [T, heads, head_dim].
void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate);
}  // namespace cpu
namespace cuda {
void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate);
}  // namespace cuda

}  // namespace tf
