#pragma once
// The TMA-fed split-bf16 products (conv_tma.cuh), shared by the convolution and the attention, and
// the passes that prepare their split operands. For .cu files (the epilogue is a device struct).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/kernels/channels_f32.h"

namespace tf::cuda {

// A picture split into bf16 hi and lo, channels last: element (y, x, c) at (y * W + x) * C + c.
struct SplitPicture {
  const __nv_bfloat16* hi;
  const __nv_bfloat16* lo;
  int C, H, W;
};
// The output positions and the input window each one reads (a 1x1 window over a one-row picture
// makes the product a plain GEMM: C[M, n] = A[M, :] . B[n, :]).
// With subpixel the picture is read through a nearest 2x upsample before a 3x3 window (ks 3, stride 1,
// padding 1): Ho x Wo is the picture's own size, each position giving the 2x2 outputs (2 oy + a, 2 ox + b)
// of the 2Ho x 2Wo output; A is then subpixel_weights' [M, 4 classes x 7 taps x Cp].
struct ConvWindow {
  int ks, stride, pad_top, pad_left, Ho, Wo;
  bool subpixel = false;
};

// Whether launch_split_tma takes these operands (C a multiple of 8; a split A only at ks 1).
bool split_tma_supports(int C, int ks, int stride, bool a_split);
// e = A . im2col(B) with K = tap * Cp + c, Cp = C rounded up to 64 (B's channels past C read as
// zeros): A [M, ks * ks * Cp] bf16 K-contiguous with each tap's columns past C zero, exact (a_lo
// null), or [M, C] split into a_hi + a_lo. Output position n = oy * Wo + ox of e's columns.
void launch_split_tma(const __nv_bfloat16* a_hi, const __nv_bfloat16* a_lo, int M, const SplitPicture& b,
                      const ConvWindow& w, const gemm::Epilogue& e, cudaStream_t stream);
// The runs (e.tile_stats' slots a row) where launch_split_tma's kernel for these exact-A operands takes its
// output's statistics in its consumers (halo and row tiles, slab_stats.cuh), else 0.
// (halo_tiles false: 0 for the halo tiles too).
int split_tma_stats_tiles(int M, const SplitPicture& b, const ConvWindow& w, bool halo_tiles = true);
// Whether a nearest 2x upsample + 3x3 convolution of C channels to M runs as sub-pixel classes.
bool subpixel_supported(int C, int M);
// x [C, Hs, Ws] fp32 (through a nearest 2x upsample when asked, then GroupNorm's map when norm is
// given) -> hi, lo [H, W, C]; C % 8 == 0. With raw_hi (and norm, no upsample) x's own split as well, into
// raw_hi, raw_lo (one read of x where the 16-byte kernel applies).
void launch_split_channels_last(const float* x, int C, int Hs, int Ws, bool upsample, const GroupNormApply* norm,
                                __nv_bfloat16* hi, __nv_bfloat16* lo, cudaStream_t stream,
                                __nv_bfloat16* raw_hi = nullptr, __nv_bfloat16* raw_lo = nullptr);
// hi[i] = bf16(x[i]), lo[i] = bf16(x[i] - hi[i]), the layout kept.
void launch_split_elementwise(const float* x, int64_t n, __nv_bfloat16* hi, __nv_bfloat16* lo, cudaStream_t stream);

}  // namespace tf::cuda
