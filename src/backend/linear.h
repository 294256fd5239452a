#pragma once
// Linear layer without bias, as torch's bf16 nn.Linear: y[t, o] = bf16(sum_k float(x[t, k]) * float(w[o, k])).
// Each sum is one fp32 accumulation over k in a fixed order (16 interleaved partial sums,
// lane j takes k = j mod 16 in increasing k, combined by a fixed pairwise tree); every product of
// two bf16 values is exact in fp32, so fused multiply-add changes nothing. One rounding at the end.
// w is read in place (on the CPU: straight from the mapped checkpoint).
#include "core/tensor.h"

namespace tf {

// x: BF16 [n, K]; w: BF16 [N, K]; y: BF16 [n, N] (must not alias x).
void linear(const Tensor& x, const Tensor& w, Tensor& y);

}  // namespace tf
