#pragma once
// conv_tma_cols_kernel for 3x3 stride-1 convolutions whose tiles are one picture row of 128 output
// positions: each 64-channel tile's input rows are read once per tap row (a halo of 130 positions),
// and the three taps along x are the same shared-memory box read one and two rows further on
// (wgmma descriptors need no base offset for that: bench/cuda/wgmma_row_shift_probe.cu). The tap
// boxes' bytes a tile drop from 9 x 128 to 3 x 130 positions.
// Two rings: halo chunks (hi and lo of one tap row's channel tile), c_tiles + 1 of them so the next
// tap row's chunks load while the last ones are read; and the weights' K tiles. K order, K tiles,
// the 32-deep last tile for C % 64 == 32 and the epilogue are conv_tma_cols_kernel's: the same bytes.
#include "backend/cuda/kernels/split_products/conv_tma_cols.cuh"
#include "backend/cuda/kernels/split_products/slab_stats.cuh"

namespace tf::cuda::conv_tma {

constexpr int kHaloRows = 130;  // 128 output positions and one more on each side
constexpr int kHaloBoxBytes = 17 * 1024;  // 130 rows of 128 bytes, rounded up to the swizzle's 1024
constexpr int kHaloChunkBytes = 2 * kHaloBoxBytes;  // hi, lo
template <int CO>
constexpr int kHaloWeightBytes = CO * BK * 2;

// The rings' depths for c_tiles channel tiles (0 halo chunks when they do not fit beside 3 weight tiles).
struct HaloRings {
  int chunks, weights;
};
template <int CO>
constexpr HaloRings halo_rings(int c_tiles) {
  const int chunks = c_tiles + 1, room = kSmemOptIn - 2048 - kColsOutBytes<CO> - chunks * kHaloChunkBytes;
  const int weights = room / kHaloWeightBytes<CO> < 8 ? room / kHaloWeightBytes<CO> : 8;
  return weights >= 3 ? HaloRings{chunks, weights} : HaloRings{0, 0};
}
template <int CO>  // the rings, the staged tile, the alignment slack, the barriers, the bias as floats
constexpr size_t halo_smem_bytes(HaloRings r) {
  return size_t(r.chunks) * kHaloChunkBytes + size_t(r.weights) * kHaloWeightBytes<CO> + kColsOutBytes<CO> + 1024 +
         (2 * (r.chunks + r.weights) + 3) * sizeof(uint64_t) + kColsBias<CO> * sizeof(float);
}
static_assert(halo_rings<96>(3).weights >= 3 && halo_rings<96>(6).chunks == 0 &&
              halo_smem_bytes<96>(halo_rings<96>(1)) <= size_t(kSmemOptIn) &&
              halo_smem_bytes<96>(halo_rings<96>(2)) <= size_t(kSmemOptIn) &&
              halo_smem_bytes<96>(halo_rings<96>(3)) <= size_t(kSmemOptIn));

// Launch: s.BW == 128, s.BH == 1, stride 1, ks 3; maps' boxes 130 positions (64 or 32 channels).
// 96 outputs only (CO == kStagedCo): at 192 the halo ran 8% slower than the column tiles.
template <int CO, int CT, bool HALF>  // as conv_tma_cols_kernel's
__global__ void __launch_bounds__(THREADS, 1)
    conv_tma_halo_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap hi_map,
                         const __grid_constant__ CUtensorMap lo_map, const __grid_constant__ CUtensorMap w32_map,
                         const __grid_constant__ CUtensorMap hi32_map, const __grid_constant__ CUtensorMap lo32_map,
                         ConvTiles s, HaloRings rings, gemm::Epilogue e) {
  static_assert(CO == kStagedCo);
  constexpr int kWBytes = kHaloWeightBytes<CO>;
  // with the tap's channel tiles fixed (CT > 0) the rings' depths are constants: no divisions per K tile
  const int ct = CT > 0 ? CT : s.c_tiles;
  const int HS = CT > 0 ? halo_rings<CO>(CT).chunks : rings.chunks;
  const int WS = CT > 0 ? halo_rings<CO>(CT).weights : rings.weights;
  extern __shared__ unsigned char smem_raw[];
  auto* halo = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  unsigned char* wts = halo + HS * kHaloChunkBytes;
  auto* staged = reinterpret_cast<float*>(wts + WS * kWBytes);  // 96 outputs: the tile to store
  auto* halo_full = reinterpret_cast<uint64_t*>(wts + WS * kWBytes + kColsOutBytes<CO>);
  uint64_t* halo_empty = halo_full + HS;
  uint64_t* w_full = halo_empty + HS;
  uint64_t* w_empty = w_full + WS;
  uint64_t* out_full = w_empty + WS;  // the consumers have staged a tile
  uint64_t* out_empty = out_full + 1;  // the store warps have read it
  uint64_t* res_full = out_empty + 1;  // residual_staged: its copy has landed
  auto* bias = reinterpret_cast<float*>(res_full + 1);
  if (threadIdx.x == 0) {
    mbarrier_init_stages(halo_full, halo_empty, HS, 2 * 128);
    mbarrier_init_stages(w_full, w_empty, WS, 2 * 128);
    mbarrier_init(out_full, 2 * 128);
    mbarrier_init(out_empty, kStoreWarps * 32);
    mbarrier_init(res_full, kStoreWarps * 32);
    mbarrier_init_fence();
  }
  for (int m = threadIdx.x; m < kColsBias<CO>; m += THREADS) bias[m] = e.bias && m < e.M ? __bfloat162float(e.bias[m]) : 0.f;
  __syncthreads();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {
    registers_decrease<kProducerRegisters<CO>>();
    if (threadIdx.x >= 32) {  // the store warps
      run_store_warps<kStagedCo, 1, false>(e, s, staged, out_full, out_empty, res_full);
      return;
    }
    if (threadIdx.x != 0) return;
    int hq = 0, wq = 0;  // halo chunks and weight tiles issued by this block, across its output tiles
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const TilePlace q = tile_place(s, tile, CO);  // q.m0: the tile's output channels' weights
      const int m0 = q.m0, ix0 = q.ox0 - s.pad_left, iy0 = q.oy0 - s.pad_top;
      for (int tap = 0; tap < 9; ++tap) {
        const int ky = tap / 3, kx = tap - 3 * ky;
        for (int c = 0; c < ct; ++c) {
          const bool half = s.half_last && c == ct - 1;
          if (kx == 0) {  // the tap row's chunk of channel tile c
            const int st = hq % HS;
            if (hq >= HS) mbarrier_wait(halo_empty + st, ((hq / HS) - 1) & 1);
            unsigned char* dst = halo + st * kHaloChunkBytes;
            mbarrier_arrive_expect_tx(halo_full + st, 2 * kHaloRows * (half ? 64 : 128));
            tma_load_3d(dst, half ? &hi32_map : &hi_map, halo_full + st, c * BK, ix0, iy0 + ky);
            tma_load_3d(dst + kHaloBoxBytes, half ? &lo32_map : &lo_map, halo_full + st, c * BK, ix0, iy0 + ky);
            ++hq;
          }
          const int st = wq % WS;
          if (wq >= WS) mbarrier_wait(w_empty + st, ((wq / WS) - 1) & 1);
          mbarrier_arrive_expect_tx(w_full + st, half ? kWBytes / 2 : kWBytes);
          tma_load_2d(wts + st * kWBytes, half ? &w32_map : &w_map, w_full + st, (tap * ct + c) * BK, m0);
          ++wq;
        }
      }
    }
    return;
  }

  registers_increase<kConsumerRegisters<CO>>();
  const int cw = wg - 1, t = threadIdx.x % 128;
  const bool copied = residual_staged(e, s);
  int n = 0;  // tiles staged for the store warps
  int hq = 0, wq = 0;  // this tile's first halo chunk and weight tile, counted across the block's tiles
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
    float acc[CO / 2];
#pragma unroll
    for (int i = 0; i < CO / 2; ++i) acc[i] = 0.f;
    // K tile kt: tap kt / ct (row ky, column kx), channel tile kt % ct, in chunk (ky, c)
    auto acquire = [&](int kt) {
      const int tap = kt / ct, c = kt - tap * ct, ky = tap / 3, kx = tap - 3 * ky;
      const int hc = hq + ky * ct + c, hs = hc % HS, ws = (wq + kt) % WS;
      if (kx == 0) mbarrier_wait(halo_full + hs, (hc / HS) & 1);
      mbarrier_wait(w_full + ws, ((wq + kt) / WS) & 1);
      const bool half = s.half_last && c == ct - 1;  // rows of 64 bytes
      const unsigned char* h = halo + hs * kHaloChunkBytes + (64 * cw + kx) * (half ? 64 : 128);
      return ColsKTile{h, h + kHaloBoxBytes, wts + ws * kWBytes, half};
    };
    auto release = [&](int kt) {
      const int tap = kt / ct, c = kt - tap * ct, ky = tap / 3, kx = tap - 3 * ky;
      mbarrier_arrive(w_empty + (wq + kt) % WS);
      if (kx == 2) mbarrier_arrive(halo_empty + (hq + ky * ct + c) % HS);  // the tap row's last read of the chunk
    };
    cols_k_loop<CO, CT, HALF>(acc, 9 * ct, acquire, release);
    hq += 3 * ct;
    wq += 9 * ct;
    if (n > 0) mbarrier_wait(out_empty, (n - 1) & 1);  // the store warps have read the last tile
    const TilePlace place = tile_place(s, tile, CO);
    if (copied) {
      mbarrier_wait(res_full, n & 1);  // this tile's residual has landed in the staging
      stage_cols<true>(staged, cw, t, acc, e.alpha, bias + place.m0);
    } else {
      stage_cols<false>(staged, cw, t, acc);
    }
    mbarrier_arrive(out_full);
    ++n;
    if (e.tile_stats) {  // the outputs' slab statistics while the store warps store (acc holds them when copied)
      if (!copied) output_values(acc, t, e.alpha, bias + place.m0);
      store_slab_stats(e, s.Wo, tile / s.m_tiles, place.m0, place.ox0, cw, t, acc);
    }
  }
}

}  // namespace tf::cuda::conv_tma
