#pragma once
// SiTU-GLU's bounded gated product (MOSS-Image's FFN), SiTU(u, g) = (4 tanh(g / 4) sigmoid(g)) (25 tanh(u / 25)),
// in fp32 and rounded once, as kohakumoss's fused op (the official eager ops round each step; once is closer
// to float32):
//   a = (4 * tanh(g / 4)) * sigmoid(g)               fp32, unrounded
//   b = 25 * tanh(u / 25)                            fp32, unrounded
//   y = bf16(a * b)                                  |y| < 100
#include "core/tensor.h"

namespace tf {

// up (u), gate (g), y: BF16 of one shape (y may alias either).
void situ_gated_product(const Tensor& up, const Tensor& gate, Tensor& y);

namespace cpu {
void situ_gated_product(const Tensor& up, const Tensor& gate, Tensor& y);
}  // namespace cpu
namespace cuda {
void situ_gated_product(const Tensor& up, const Tensor& gate, Tensor& y);
}  // namespace cuda

}  // namespace tf
