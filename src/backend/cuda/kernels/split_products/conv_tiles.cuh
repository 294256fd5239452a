#pragma once
// The TMA-fed products' tile geometry, shared by their kernels and epilogues.

namespace tf::cuda::conv_tma {

constexpr int BM = 128, BN = 128, BK = 64, THREADS = 384;
constexpr int kTileBytes = 128 * BK * 2;  // one operand tile: 128 rows of 128 bytes

struct ConvTiles {
  int m_tiles, tiles_x, tiles;  // tile i: Co rows (i % m_tiles) * 128, positions tile i / m_tiles (x fastest)
  int BW, BH;                   // output positions per tile: BH rows x BW columns, BW * BH == 128
  int ks, stride, pad_top, pad_left;
  int c_tiles, KT;  // Cp / 64; K tiles per output tile (taps * c_tiles)
  int half_last;    // conv_tma_cols_kernel: each tap's last channel tile is 32 deep (C % 64 == 32)
  int Ho, Wo;
};

}  // namespace tf::cuda::conv_tma
