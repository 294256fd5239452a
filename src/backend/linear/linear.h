#pragma once
// Linear layer without bias, as torch's bf16 nn.Linear: y[t, o] = bf16(sum_k float(x[t, k]) * float(w[o, k])).
// Each sum is one fp32 accumulation over k in a fixed order (16 interleaved partial sums,
// lane j takes k = j mod 16 in increasing k, combined by a fixed pairwise tree); every product of
// two bf16 values is exact in fp32, so fused multiply-add changes nothing. One rounding at the end.
// w is read in place (on the CPU: straight from the mapped checkpoint).
#include <cstdint>
#include <initializer_list>
#include <span>

#include "core/tensor.h"

namespace tf {

// Up to this many rows a row's sums do not depend on the row count on any backend, so prompts
// packed into one forward of at most this many rows get their own bytes (more rows change the
// CUDA product's kernel).
constexpr int64_t kLinearPackedRows = 128;

// One weight of a group of linear layers that read the same x: w [N, K], y [n, N].
struct LinearPart {
  const Tensor* w;
  Tensor* y;
};

// x: BF16 [n, K]; w: BF16 [N, K]; y: BF16 [n, N] (must not alias x).
// Or y: F32 [P, n, N], the product left as k-share sums for its consumer to finish: y[p] is the fp32
// sum over the p-th of P equal k ranges (the same fp32 accumulation, no rounding), and the product
// is bf16(((y[0] + y[1]) + ...) + y[P - 1]), added in share order (residual_add and
// residual_add_rms_norm_zero_centred take such y as their d). P is the device's: on CUDA
// linear_k_shares(...); the CPU takes any P that divides K.
void linear(const Tensor& x, const Tensor& w, Tensor& y);

// The k shares the device's linear offers for n rows of x [n, K] against w [N, K], 0 for none (the
// CPU; CUDA where one share a tile already fills the GPU, or above kLinearPackedRows rows). Fixed by
// K and N, never by n, so a row's bytes stay independent of the rows packed with it.
int64_t linear_k_shares(Device d, int64_t n, int64_t K, int64_t N);

// y_i = x w_i^T for each part, with linear's numerics; on CUDA one launch streams all the weights.
void linear_shared_input(const Tensor& x, std::initializer_list<LinearPart> parts);

}  // namespace tf
