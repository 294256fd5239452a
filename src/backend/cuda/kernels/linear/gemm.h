#pragma once
// bf16 matrix products y[m, n] = bf16(x[m, k] . w[n, k]^T), fp32 accumulation, one rounding at the end.
// Up to kStreamingRows rows: the weight-streaming kernel (gemm_streaming.cu). More rows: cuBLASLt,
// with the algorithm chosen once per (weight shape, alignment) at a reference row count for up to 128
// rows and one for more (TF_LINEAR_LARGE_ROWS), restricted to kernels without split-K reductions in the output type, and
// reused for every row count of its range. Either way a row's sums do not depend on how many rows
// share the product within a range, so repeats and packed samples are byte-identical to single runs.
#include <cstdint>
#include <span>

namespace tf::cuda {

constexpr int64_t kStreamingRows = 128;
constexpr int kMaxStreamingWeights = 4;

// y[m, n] = x[m, k] . w[n, k]^T (a linear layer without bias); all bf16, row-major, on the device.
void gemm_bf16_xwt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// One weight of a product group that reads the same x: w [n, k], y [m, n].
struct StreamingWeight {
  const void* w;
  void* y;
  int64_t n;
};

// Several weights on one x: one streaming launch where it fits, else one product each.
void gemm_bf16_xwt_group(const void* x, int64_t m, int64_t k, std::span<const StreamingWeight> ws);

// The streaming kernel's geometry: 1 <= m <= kStreamingRows, k a multiple of 64, n even, x and w
// 16-byte aligned, y 4-byte aligned, at most kMaxStreamingWeights weights.
bool gemm_streaming_fits(int64_t m, int64_t k, const void* x, std::span<const StreamingWeight> ws);
// tile_rows: the weight rows a block streams, 128, 192 or 256; 0 lets streaming_tile_rows choose.
void gemm_streaming(const void* x, int64_t m, int64_t k, std::span<const StreamingWeight> ws, int tile_rows = 0);
// 128 where 256-row tiles would need k shares and twice the tiles still fill the GPU once: the same
// blocks at half the shares, so each share's partial is half as wide and the cluster sends fewer
// bytes (or none); 192 where 256-row tiles take one share each and leave SMs idle but 192-row tiles
// still fit on the GPU at once; else 256. Fixed by the shapes and the GPU, never by the row count.
int streaming_tile_rows(int64_t k, std::span<const StreamingWeight> ws);
// How many k shares a group of `tiles` weight tiles is split into (fixed by the shapes and the
// GPU, never by the row count).
int streaming_splits(int64_t k, int tiles);

// One weight's product left as k-share sums: shares [P, m, n] fp32, share p the sum over the p-th of
// P equal k ranges (128-row tiles, no cluster, nothing added here); y = bf16(((shares[0] + shares[1])
// + ...) + shares[P - 1]) is the consumer's to finish. P = streaming_share_count(k, n): the most
// shares (a power of two, at most 8) whose blocks fit the GPU once, or 0 where that is one share or
// k and n are outside the kernel's geometry.
int streaming_share_count(int64_t k, int64_t n);
void gemm_streaming_shares(const void* x, int64_t m, int64_t k, const void* w, int64_t n, float* shares);

// y[m, n] = bf16(bf16(silu(bf16(x . w_gate^T))) * bf16(x . w_up^T)): the MLP's two products and
// their gated product in one streaming launch whose tiles alternate 8 rows of each weight, so the
// bytes are those of the two products then silu_gated_product. False, with nothing launched, where
// the geometry is outside the kernel's, n is not a multiple of 8, w_up does not lie after w_gate
// (one tensor map spans both), or the tiles would need k shares.
bool gemm_streaming_silu_gated(const void* x, int64_t m, int64_t k, const void* w_gate, const void* w_up, int64_t n,
                               void* y);

// TF_GEMM=cublaslt (backend/variants.h): cuBLASLt for every row count, the comparison the benchmarks print.
bool gemm_cublaslt_forced();
void gemm_cublaslt(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k);

// y = bf16(x . w^T + b) on cuBLASLt's bias epilogue (the sum and b added in fp32, one rounding), b [n]
// BF16 or F32 as `bias` says; its algorithms chosen as gemm_cublaslt's.
enum class GemmBias { none, bf16, f32 };
void gemm_cublaslt_bias(const void* x, const void* w, const void* b, GemmBias bias, void* y, int64_t m, int64_t n,
                        int64_t k);

// The algorithm cache's size, for tests.
int gemm_cached_plans();

}  // namespace tf::cuda
