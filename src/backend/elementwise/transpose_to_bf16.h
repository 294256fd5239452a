#pragma once
// A matrix transposed and rounded to bf16: y[k, r] = bf16(x[r, k]), round to nearest even (the
// reference's cast of channel-major latents to token rows).
#include "core/tensor.h"

namespace tf {

// x: F32 [R, K]; y: BF16 [K, R].
void transpose_to_bf16(const Tensor& x, Tensor& y);

namespace cpu {
void transpose_to_bf16(const Tensor& x, Tensor& y);
}  // namespace cpu
namespace cuda {
void transpose_to_bf16(const Tensor& x, Tensor& y);
}  // namespace cuda

}  // namespace tf
