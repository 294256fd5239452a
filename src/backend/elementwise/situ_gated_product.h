#pragma once
// SiTU-GLU's bounded gated product (MOSS-Image's FFN), SiTU(u, g) = (4 tanh(g / 4) sigmoid(g)) (25 tanh(u / 25)),
// op by op as the reference's bf16 tensors round, every step once (fp32 inside each):
//   a = bf16(bf16(4 * bf16(tanh(bf16(g / 4)))) * bf16(sigmoid(g)))
//   b = bf16(25 * bf16(tanh(bf16(u / 25))))
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
