#pragma once
// GroupNorm statistics of a product's output taken by the consumers that stage it, from their registers after
// the tile is staged (gemm::TileStat), so the store warps' chain stays stores only: a halo tile's channels per
// consumer warp's 16 positions, a row tile's channels per its 128 positions.
#include <cstdint>

#include "backend/cuda/kernels/split_products/conv_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda::conv_tma {

// Half of v[0 .. 2 HALF) kept, the other half added to the partner lane's (lane ^ bit) kept half: after folds of
// 24, 12 and 6 over bits 16, 8, 4 lane 4 r + q holds the warp's sums of its values 6 r .. 6 r + 5.
template <int HALF>
__device__ __forceinline__ void fold_half(float (&v)[48], int lane, int bit) {
  const bool upper = (lane & bit) != 0;
#pragma unroll
  for (int i = 0; i < HALF; ++i) {
    const float send = upper ? v[i] : v[i + HALF];
    const float keep = upper ? v[i + HALF] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, bit);
  }
}

// Halo tiles (one picture row of 128 positions): consumer thread t of warpgroup cw with its outputs y (stage_cols'
// order: y[4 j + 2 h + u] is position 64 cw + 16 (t / 32) + (t % 32) / 4 + 8 h, channel 8 j + 2 (t % 4) + u) of the
// tile at (ox0, channel m0), position tile pt: run 8 pt + 4 cw + t / 32 of each channel (the warp's 16 positions)
// summed shifted by its first value (lanes 0-3 hold it), positions at or past Wo adding nothing; the sums reduced
// over the warp's 8 lanes a channel.
__device__ __forceinline__ void store_slab_stats(const gemm::Epilogue& e, int Wo, int pt, int m0, int ox0, int cw,
                                                 int t, const float (&y)[48]) {
  const int lane = t % 32, q = lane % 4, r = lane / 4;
  const int first = ox0 + 64 * cw + 16 * (t / 32), p = first + r;
  const bool in0 = p < Wo, in1 = p + 8 < Wo;
  const int n = min(max(Wo - first, 0), 16);
  float v[48], k[24];
#pragma unroll
  for (int i = 0; i < 24; ++i) {  // slot i: channel 8 (i / 2) + 2 q + i % 2
    const int a = 4 * (i / 2) + i % 2;
    k[i] = n > 0 ? __shfl_sync(0xffffffffu, y[a], q) : 0.f;
    const float d0 = in0 ? __fsub_rn(y[a], k[i]) : 0.f, d1 = in1 ? __fsub_rn(y[a + 2], k[i]) : 0.f;
    v[2 * i] = __fadd_rn(d0, d1);
    v[2 * i + 1] = __fmaf_rn(d0, d0, __fmul_rn(d1, d1));
  }
  fold_half<24>(v, lane, 16);
  fold_half<12>(v, lane, 8);
  fold_half<6>(v, lane, 4);
  const int64_t run = int64_t(8) * pt + 4 * cw + t / 32;
#pragma unroll
  for (int m = 0; m < 3; ++m) {
    float km = 0.f;
#pragma unroll
    for (int i = m; i < 24; i += 3)
      if (i / 3 == r) km = k[i];
    const int i = 3 * r + m, c = m0 + 8 * (i / 2) + 2 * q + i % 2;
    if (c < e.M) e.tile_stats[int64_t(c) * e.stats_tiles + run] = {v[2 * m], v[2 * m + 1], km, float(n)};
  }
}

// Row tiles (128 output channels x 128 positions of the class grid, BH rows of BW): consumer thread t of warpgroup
// cw with its outputs y (stage_rows' order: y[4 j + 2 h + u] is channel m0 + 64 cw + 16 (t / 32) + (t % 32) / 4 +
// 8 h, position 8 j + 2 (t % 4) + u) of the tile at (oy0, ox0), entry `run` of each channel: its positions inside
// the picture summed shifted by the channel's first value (the quad's lane 0 holds it), then over the quad.
__device__ __forceinline__ void store_row_tile_stats(const gemm::Epilogue& e, const ConvTiles& s, int64_t run, int m0,
                                                     int oy0, int ox0, int cw, int t, const float (&y)[64]) {
  const int lane = t % 32, q = lane % 4;
  const bool whole = oy0 + s.BH <= s.Ho && ox0 + s.BW <= s.Wo;  // no position outside: no tests
  const int bw_shift = __ffs(s.BW) - 1;                            // BW is a power of 2
  float sum[2] = {0.f, 0.f}, sq[2] = {0.f, 0.f}, cnt = 0.f, k[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) k[h] = __shfl_sync(0xffffffffu, y[2 * h], lane & ~3);
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int nn = 8 * j + 2 * q + u;
      if (!whole && (oy0 + (nn >> bw_shift) >= s.Ho || ox0 + (nn & (s.BW - 1)) >= s.Wo)) continue;
      cnt = __fadd_rn(cnt, 1.f);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float d = __fsub_rn(y[4 * j + 2 * h + u], k[h]);
        sum[h] = __fadd_rn(sum[h], d);
        sq[h] = __fmaf_rn(d, d, sq[h]);
      }
    }
#pragma unroll
  for (int o = 1; o < 4; o <<= 1) {
    cnt = __fadd_rn(cnt, __shfl_xor_sync(0xffffffffu, cnt, o));
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      sum[h] = __fadd_rn(sum[h], __shfl_xor_sync(0xffffffffu, sum[h], o));
      sq[h] = __fadd_rn(sq[h], __shfl_xor_sync(0xffffffffu, sq[h], o));
    }
  }
  if (q != 0) return;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + 64 * cw + 16 * (t / 32) + lane / 4 + 8 * h;
    if (m < e.M) e.tile_stats[int64_t(m) * e.stats_tiles + run] = {sum[h], sq[h], cnt > 0.f ? k[h] : 0.f, cnt};
  }
}

}  // namespace tf::cuda::conv_tma
