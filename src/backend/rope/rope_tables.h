#pragma once
// Rope cos/sin tables, computed once on the host in fp32 as transformers' default rope does, then
// rounded to bf16 (the dtype torch casts them to):
//   inv_freq[j] = 1 / pow(float(theta), float(2j) / float(rotary_dim))   (fp32 each step), j < rotary_dim / 2
//   angle = float(pos) * inv_freq[j];  cos = bf16(cos(angle)), sin = bf16(sin(angle))  (fp32)
#include <cstdint>

#include "core/tensor.h"

namespace tf {

struct RopeTables {
  Tensor cos, sin;  // [positions, rotary_dim / 2] on the CPU: BF16 (the first form) or F32 (per token)
};

RopeTables make_rope_tables(int64_t positions, int64_t rotary_dim, double theta);

// Per-token tables for positions on several axes (MOSS-Image's four), each axis a section of B bands,
// axis-major, kept in fp32 as kohakumoss's rope_sin_cos keeps them: for token t, axis a, band j,
//   phase = fp32(positions[t, a] * bands[j]),  cos[t, a * B + j] = cos(phase),  sin[t, a * B + j] = sin(phase)
// positions: F32 [T, A], bands: F32 [B], both on the CPU; the tables F32 [T, A * B] are what
// qkv_norm_rope reads. One axis of positions 0, 1, ... with the bands above gives the first form's
// values before its bf16 rounding.
RopeTables make_rope_tables(const Tensor& positions, const Tensor& bands);

}  // namespace tf
