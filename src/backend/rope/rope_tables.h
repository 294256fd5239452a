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

}  // namespace tf
