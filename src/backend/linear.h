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
void linear(const Tensor& x, const Tensor& w, Tensor& y);

// y_i = x w_i^T for each part, with linear's numerics; on CUDA one launch streams all the weights.
void linear_shared_input(const Tensor& x, std::initializer_list<LinearPart> parts);

}  // namespace tf
