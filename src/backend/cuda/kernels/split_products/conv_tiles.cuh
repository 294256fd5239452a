#pragma once
// The TMA-fed products' tile geometry, shared by their kernels and epilogues.
#include <cstdint>

namespace tf::cuda::conv_tma {

constexpr int BM = 128, BN = 128, BK = 64, THREADS = 384;
constexpr int kTileBytes = 128 * BK * 2;  // one operand tile: 128 rows of 128 bytes
// The epilogue's staging rows: each consumer warp writes 8 Co rows of its sums at a time, 128 positions each.
constexpr int kOutRowsPerWarp = 8;

struct ConvTiles {
  int m_tiles, tiles_x, tiles;  // tile i: class i % classes, then Co rows ((i / classes) % m_tiles) * 128 (96), then
                                // positions tile i / classes / m_tiles (x fastest)
  int BW, BH;                   // output positions per tile: BH rows x BW columns, BW * BH == 128
  int ks, stride, pad_top, pad_left;
  int c_tiles, KT;  // Cp / 64; K tiles per output tile (taps * c_tiles)
  int half_last;    // conv_tma_cols_kernel: each tap's last channel tile is 32 deep (C % 64 == 32)
  int Ho, Wo;
  // Sub-pixel tiles (a nearest 2x upsample then a 3x3 convolution, classes == 4): class (a, b) = (i / 2, i % 2)
  // computes outputs (2 oy + a, 2 ox + b) of the 2Ho x 2Wo output as a 2x2 window over the Ho x Wo picture
  // (pad_top 1 - a, pad_left 1 - b) with its own weights: KT two-product K tiles, then KT1 one-product ones
  // (the picture's hi against the weights' lo, taps lo_tap(class, j)); A's columns per class: class_k.
  int classes, KT1, class_k;
};

// A consumer warp's staging rows ([kOutRowsPerWarp][BN] floats, column c of row r at c ^ (8 r), so neither the
// pair writes nor the 4-column reads conflict): half h (rows 8 h ..) of the warp's 16 accumulator rows staged,
// lane l's pairs acc[4 j + 2 h], acc[4 j + 2 h + 1] at row l / 4, columns 8 j + 2 (l % 4); then columns
// 4 l .. 4 l + 3 of row R read back as one float4.
__device__ __forceinline__ void stage_row_half(float* rows, int lane, int h, const float (&acc)[64]) {
  const int r = lane / 4, q = lane % 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
    *reinterpret_cast<float2*>(rows + r * BN + ((8 * j + 2 * q) ^ (8 * r))) =
        make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
}
__device__ __forceinline__ float4 staged_columns(const float* rows, int lane, int R) {
  return *reinterpret_cast<const float4*>(rows + R * BN + ((4 * lane) ^ (8 * R)));
}

// Tile i's place in ConvTiles' order: its class, its first output channel (`rows` channels a channel tile) and
// its first output position (of its class's grid).
struct TilePlace {
  int cls, m0, oy0, ox0;
};
__device__ __forceinline__ TilePlace tile_place(const ConvTiles& s, int tile, int rows) {
  const int mt = tile / s.classes, pt = mt / s.m_tiles;
  return {tile % s.classes, (mt % s.m_tiles) * rows, (pt / s.tiles_x) * s.BH, (pt % s.tiles_x) * s.BW};
}

// The output positions of one tile's class: position (oy, ox) of the class's grid at base + oy row + ox col.
struct OutMap {
  int64_t base, row;
  int col;
};
__device__ __forceinline__ OutMap out_map(const ConvTiles& s, int cls) {
  if (s.classes == 1) return {0, s.Wo, 1};
  return {int64_t(cls / 2) * 2 * s.Wo + cls % 2, int64_t(4) * s.Wo, 2};
}
// The class's window offset: 1 - a rows, 1 - b columns before its output (s.pad_* without classes).
__device__ __forceinline__ int class_pad_top(const ConvTiles& s, int cls) { return s.classes == 1 ? s.pad_top : 1 - cls / 2; }
__device__ __forceinline__ int class_pad_left(const ConvTiles& s, int cls) { return s.classes == 1 ? s.pad_left : 1 - cls % 2; }
// The class's j-th one-product tap (of 3): every 2x2 tap but the one whose weight is a single 3x3 weight
// (tap (a, b): exact in bf16, so its lo part is zero).
__device__ __forceinline__ int lo_tap(int cls, int j) { return j < cls ? j : j + 1; }

}  // namespace tf::cuda::conv_tma
