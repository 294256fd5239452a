#pragma once
// bf16 matrix products on cuBLASLt: bf16 operands, fp32 accumulation, one rounding to bf16 at the
// end. The algorithm is chosen once per (shape, alignment) by cuBLASLt's heuristic, restricted to
// kernels without split-K reductions in the output type, and cached, so a shape always runs the
// same kernel and repeats are byte-identical.
#include <cstdint>

namespace tf::cuda {

// y[m, n] = x[m, k] . w[n, k]^T (a linear layer without bias); all bf16, row-major, on the device.
void gemm_bf16_xwt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// Narrow products (n <= 64 output columns, m <= 512 tokens) on an own kernel: cuBLASLt's latency
// dominates them. gemm_bf16_xwt routes them there; exposed for tests.
bool gemm_small_n_fits(int64_t m, int64_t n, int64_t k);
void gemm_small_n(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// Skinny products (m <= 96 tokens, n > 64, k a multiple of 128, 16-byte aligned operands) on an
// own tensor-core kernel that streams the weight once with 16-byte loads.
bool gemm_skinny_fits(int64_t m, int64_t n, int64_t k, const void* x, const void* w, const void* y);
void gemm_skinny(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// TF_GEMM=cublaslt sends every product to cuBLASLt (for comparisons); read once.
bool gemm_own_kernels_enabled();

// The algorithm cache's size, for tests.
int gemm_cached_plans();

}  // namespace tf::cuda
