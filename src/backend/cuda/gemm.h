#pragma once
// bf16 matrix products on cuBLASLt: bf16 operands, fp32 accumulation, one rounding to bf16 at the
// end. The algorithm is chosen once per (weight shape, alignment) by cuBLASLt's heuristic at a
// reference row count, restricted to kernels without split-K reductions in the output type, and
// reused for every row count, so repeats and packed prompts are byte-identical to single runs.
#include <cstdint>

namespace tf::cuda {

// y[m, n] = x[m, k] . w[n, k]^T (a linear layer without bias); all bf16, row-major, on the device.
void gemm_bf16_xwt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// Own kernels for narrow (n <= 64 columns, m <= 512 tokens) and skinny (m <= 96 tokens) products.
// Measured on the H200 they are slower than cuBLASLt at the encoder's shapes (docs/perf/encoder.md),
// so gemm_bf16_xwt uses them only when TF_GEMM=own; kept, tested, for that comparison.
bool gemm_small_n_fits(int64_t m, int64_t n, int64_t k);
void gemm_small_n(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// Skinny: m <= 96 tokens, n > 64, k a multiple of 128, 16-byte aligned operands; tensor cores.
bool gemm_skinny_fits(int64_t m, int64_t n, int64_t k, const void* x, const void* w, const void* y);
void gemm_skinny(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// TF_GEMM=own routes the products that fit to the own kernels; read once.
bool gemm_own_kernels_enabled();

// The algorithm cache's size, for tests.
int gemm_cached_plans();

}  // namespace tf::cuda
