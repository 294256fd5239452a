#pragma once
// bf16 matrix products on cuBLASLt: bf16 operands, fp32 accumulation, one rounding to bf16 at the
// end. The algorithm is chosen once per (shape, alignment) by cuBLASLt's heuristic, restricted to
// kernels without split-K reductions in the output type, and cached, so a shape always runs the
// same kernel and repeats are byte-identical.
#include <cstdint>

namespace tf::cuda {

// y[m, n] = x[m, k] . w[n, k]^T (a linear layer without bias); all bf16, row-major, on the device.
void gemm_bf16_xwt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// The algorithm cache's size, for tests.
int gemm_cached_plans();

}  // namespace tf::cuda
