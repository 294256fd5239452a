#pragma once
// The 96-output column tiles' epilogue taken off the tensor cores' path: the consumers write their
// sums into a shared-memory tile and go on to the next tile's products, while three warps of the
// producer warpgroup add the bias and residual and store it (a 96-output tile has a quarter of the
// 384-output layers' products per output value, so a store on the consumers' path idles the tensor
// cores for a large share of the tile). Arithmetic as store_cols: alpha * acc + bias, then + residual.
#include "backend/cuda/kernels/split_products/conv_tma.cuh"

namespace tf::cuda::conv_tma {

constexpr int kStagedCo = 96, kStagedPositions = 128;
constexpr int kStagedOutBytes = kStagedCo * kStagedPositions * 4;  // [96 channels][128 positions] fp32
constexpr int kStoreWarps = 3;                                     // warps 1-3 of the producer warpgroup

// Position p of channel c sits at p ^ staged_swizzle(c) in the channel's row: the consumers' pair
// writes (4 channels x 8 positions a warp instruction) then hit 32 banks, and 4-position groups stay whole.
__device__ __forceinline__ int staged_swizzle(int c) { return 8 * ((c >> 1) & 3); }

// Consumer thread t of warpgroup cw: its acc (store_cols' layout, CO = 96) into the staged tile.
__device__ __forceinline__ void stage_cols(float* out, int cw, int t, const float (&acc)[kStagedCo / 2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int p = 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
#pragma unroll
    for (int j = 0; j < kStagedCo / 8; ++j) {
      const int c = 8 * j + 2 * (t % 4);
      out[c * kStagedPositions + (p ^ staged_swizzle(c))] = acc[4 * j + 2 * h];
      out[(c + 1) * kStagedPositions + (p ^ staged_swizzle(c + 1))] = acc[4 * j + 2 * h + 1];
    }
  }
}

// Store warp w (0-2), lane l: positions 4 l .. 4 l + 3 of channels w, w + 3, ...; each batch's residual
// values are loaded before any of its stores (the output may be the residual's own buffer).
__device__ __forceinline__ void store_staged_cols(const gemm::Epilogue& e, const ConvTiles& s, int oy0, int ox0,
                                                  const float* out, const float* bias, int w, int lane) {
  const int p = 4 * lane, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;  // 4 positions share a row (BW % 4 == 0)
  if (oy >= s.Ho || ox >= s.Wo) return;
  const bool vec4 = ox + 3 < s.Wo && s.Wo % 4 == 0 && e.ldc % 4 == 0 && (reinterpret_cast<uintptr_t>(e.c) & 15) == 0 &&
                    (!e.residual || (reinterpret_cast<uintptr_t>(e.residual) & 15) == 0);
  const int64_t at = int64_t(oy) * s.Wo + ox;
  constexpr int kBatch = 4;  // residual loads in flight a lane
#pragma unroll 1
  for (int c0 = w; c0 < kStagedCo; c0 += kStoreWarps * kBatch) {
    float4 r[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int c = c0 + kStoreWarps * b;
      r[b] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (e.residual && c < e.M) {
        const float* src = e.residual + int64_t(c) * e.ldc + at;
        if (vec4) {
          r[b] = *reinterpret_cast<const float4*>(src);
        } else {
          r[b].x = src[0];
          if (ox + 1 < s.Wo) r[b].y = src[1];
          if (ox + 2 < s.Wo) r[b].z = src[2];
          if (ox + 3 < s.Wo) r[b].w = src[3];
        }
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int c = c0 + kStoreWarps * b;
      if (c >= e.M) continue;
      const float4 v = *reinterpret_cast<const float4*>(out + c * kStagedPositions + (p ^ staged_swizzle(c)));
      auto y = [&](float a, float rr) {
        const float t = __fadd_rn(__fmul_rn(e.alpha, a), bias[c]);
        return e.residual ? __fadd_rn(t, rr) : t;
      };
      const float4 o = make_float4(y(v.x, r[b].x), y(v.y, r[b].y), y(v.z, r[b].z), y(v.w, r[b].w));
      float* dst = e.c + int64_t(c) * e.ldc + at;
      if (vec4) {
        *reinterpret_cast<float4*>(dst) = o;
      } else {
        dst[0] = o.x;
        if (ox + 1 < s.Wo) dst[1] = o.y;
        if (ox + 2 < s.Wo) dst[2] = o.z;
        if (ox + 3 < s.Wo) dst[3] = o.w;
      }
    }
  }
}

}  // namespace tf::cuda::conv_tma
