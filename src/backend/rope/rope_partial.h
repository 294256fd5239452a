#pragma once
// Rotary position embedding on the first rotary_dim = 2 * half dims of each head (the rest pass
// through); positions 0, 1, ... restart at each sequence start (Qwen3.5 text positions; its
// multi-axis rope reduces to this when all axes carry the same position). With c = cos[pos, i mod half],
// s = sin[pos, i mod half] (bf16 tables from make_rope_tables) and rot = cat(-x[half:rotary_dim], x[:half]):
//   y[i] = bf16(bf16(x[i] * c) + bf16(rot[i] * s))   for i < rotary_dim  (each product rounded, then the sum)
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// x: BF16 [T, heads, head_dim]; cos, sin: BF16 [positions, half] on x's device, positions >= the
// longest sequence, 2 * half <= head_dim; y: BF16 [T, heads, head_dim] (may alias x).
void rope_partial(const Tensor& x, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& y);

}  // namespace tf
