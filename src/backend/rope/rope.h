#pragma once
// Rotary position embedding, split-half, on the first rotary_dim = 2 * half dims of each head (the
// rest pass through). With the token's table row p, c = cos[p, i mod half], s = sin[p, i mod half]
// (bf16 tables, backend/rope/rope_tables.h) and rot = cat(-x[half:rotary_dim], x[:half]):
//   y[i] = bf16(bf16(x[i] * c) + bf16(rot[i] * s))   for i < rotary_dim  (each product rounded, then the sum)
// Which row a token reads is the positions variant:
//   sequential: 0, 1, ... restarting at each packed sequence (Qwen3.5's text positions, one axis; its
//     multi-axis rope reduces to this when all axes carry the same position);
//   per_token: row t for token t, for bf16 tables made one row per token.
#include <cstdint>

#include "backend/device/seq_offsets.h"
#include "backend/rope/rope_tables.h"
#include "core/tensor.h"

namespace tf {

struct RopePositions {
  SeqOffsets sequences;  // token t of sequence s reads row t - sequences[s]
  static RopePositions sequential(const SeqOffsets& sequences) { return {sequences}; }
  static RopePositions per_token(int64_t tokens) { return {single_sequence(tokens)}; }
};

// x: BF16 [T, heads, head_dim]; tables: BF16 [rows, half] on x's device, 2 * half <= head_dim, rows
// enough for every position; y: BF16 [T, heads, head_dim] (may alias x).
void rope(const Tensor& x, const RopeTables& tables, const RopePositions& positions, Tensor& y);

// The kernels behind the op: rows from per-sequence positions (per_token is one sequence of T).
namespace cpu {
void rope_split_half(const Tensor& x, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& y);
}  // namespace cpu
namespace cuda {
void rope_split_half(const Tensor& x, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& y);
}  // namespace cuda

}  // namespace tf
