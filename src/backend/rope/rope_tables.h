#pragma once
// Rope cos/sin tables, computed once on the host in fp32 as transformers' default rope does, then
// rounded to bf16 (the dtype torch casts them to):
//   inv_freq[j] = 1 / pow(float(theta), float(2j) / float(rotary_dim))   (fp32 each step), j < rotary_dim / 2
//   angle = float(pos) * inv_freq[j];  cos = bf16(cos(angle)), sin = bf16(sin(angle))  (fp32)
#include <cstdint>

#include "core/tensor.h"

namespace tf {

struct RopeTables {
  Tensor cos, sin;  // BF16 [positions, rotary_dim / 2] on the CPU
};

RopeTables make_rope_tables(int64_t positions, int64_t rotary_dim, double theta);

// Per-token tables for positions on several axes (MOSS-Image's four), each axis a section of B bands,
// axis-major: for token t, axis a, band j, with the phase fp32(positions[t, a] * bands[j]),
//   cos[t, a * B + j] = bf16(cos(phase)),  sin[t, a * B + j] = bf16(sin(phase))   (fp32 cos, sin)
// positions: F32 [T, A], bands: F32 [B], both on the CPU; the tables [T, A * B] are what rope reads
// with RopePositions::per_token. One axis of positions 0, 1, ... with the bands above gives the first
// form's bytes.
RopeTables make_rope_tables(const Tensor& positions, const Tensor& bands);

}  // namespace tf
