// Host side of the TMA-fed split-bf16 products: tensor maps, tile shape, persistent grid.
#include <algorithm>

#include "backend/cuda/kernels/split_products/conv_tma_halo.cuh"
#include "backend/variants.h"
#include "backend/cuda/runtime/launch_check.h"
#include "backend/cuda/runtime/tensor_map.h"
#include "backend/cuda/kernels/split_products/tma_gemm.h"

namespace tf::cuda {

namespace {

// The output-position rectangle per tile (BW x BH = 128) that pads Ho x Wo the least.
void choose_tile(conv_tma::ConvTiles& t) {
  int64_t best = -1;
  for (int bw : {128, 64, 32, 16}) {
    const int bh = 128 / bw;
    const int64_t area = int64_t((t.Wo + bw - 1) / bw) * bw * ((t.Ho + bh - 1) / bh) * bh;
    if (best < 0 || area < best) best = area, t.BW = bw, t.BH = bh;
  }
}

// A persistent launch of a TMA product kernel: at most one block an SM, the kernel's dynamic
// shared-memory limit raised to max_smem on its first launch (`raised`: the instantiation's own flag).
template <class... P, class... A>
void launch_persistent(void (*kernel)(P...), bool& raised, size_t max_smem, size_t smem, int tiles, const char* what,
                       cudaStream_t stream, const A&... args) {
  if (!raised) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(max_smem)), what);
    raised = true;
  }
  int device = 0, sms = 0;
  check_cuda(cudaGetDevice(&device), "split product: device");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "split product: SM count");
  kernel<<<unsigned(std::min(tiles, sms)), conv_tma::THREADS, smem, stream>>>(args...);
  check_launch(what);
}

template <bool A_SPLIT, conv_tma::SoftmaxStep STEP = conv_tma::SoftmaxStep::none>
void launch(const CUtensorMap& a, const CUtensorMap& a_lo, const CUtensorMap& hi, const CUtensorMap& lo,
            const conv_tma::ConvTiles& t, const gemm::Epilogue& e, cudaStream_t stream) {
  using namespace conv_tma;
  if constexpr (A_SPLIT && STEP == SoftmaxStep::none) {
    if (e.exp_tiles.hi) return launch<true, SoftmaxStep::exp_tiles>(a, a_lo, hi, lo, t, e, stream);
    if (e.k_block_scale) return launch<true, SoftmaxStep::scaled_k>(a, a_lo, hi, lo, t, e, stream);
  }
  static bool raised = false;
  constexpr size_t kRows = A_SPLIT ? kOutBytes : 0;        // the consumers' staging rows (A_SPLIT only)
  const bool rows = e.residual || STEP == SoftmaxStep::exp_tiles;
  const size_t smem = kSmemBytes<A_SPLIT> + (rows ? kRows : 0);  // only where used
  launch_persistent(conv_tma_kernel<A_SPLIT, STEP>, raised, kSmemBytes<A_SPLIT> + kRows, smem, t.tiles,
                    "split product (conv_tma_kernel)", stream, a, a_lo, hi, lo, t, e);
}

template <int CO, int CT, bool HALF>
void launch_cols(const CUtensorMap& w, const CUtensorMap& hi, const CUtensorMap& lo, const CUtensorMap& w32,
                 const CUtensorMap& hi32, const CUtensorMap& lo32, const conv_tma::ConvTiles& t,
                 const gemm::Epilogue& e, cudaStream_t stream) {
  using namespace conv_tma;
  static bool raised = false;
  launch_persistent(conv_tma_cols_kernel<CO, CT, HALF>, raised, kColsSmemBytes<CO>, kColsSmemBytes<CO>, t.tiles,
                    "split product (conv_tma_cols_kernel)", stream, w, hi, lo, w32, hi32, lo32, t, e);
}

template <int CO, int CT, bool HALF>
void launch_halo(const CUtensorMap& w, const CUtensorMap& hi, const CUtensorMap& lo, const CUtensorMap& w32,
                 const CUtensorMap& hi32, const CUtensorMap& lo32, const conv_tma::ConvTiles& t,
                 conv_tma::HaloRings rings, const gemm::Epilogue& e, cudaStream_t stream) {
  using namespace conv_tma;
  static bool raised = false;
  launch_persistent(conv_tma_halo_kernel<CO, CT, HALF>, raised, size_t(kSmemOptIn), halo_smem_bytes<CO>(rings),
                    t.tiles, "split product (conv_tma_halo_kernel)", stream, w, hi, lo, w32, hi32, lo32, t, rings, e);
}

// 96 outputs: a fixed tap pattern for 2 (the last 32 deep) or 3 channel tiles, else the general loop.
template <bool HALO, class... A>
void launch_cols_any(int M, const conv_tma::ConvTiles& t, const A&... args) {
  const bool ct3 = t.c_tiles == 3 && !t.half_last, ct2h = t.c_tiles == 2 && t.half_last;
  if constexpr (HALO) {
    if (M == 96 && ct3) return launch_halo<96, 3, false>(args...);
    if (M == 96 && ct2h) return launch_halo<96, 2, true>(args...);
    return launch_halo<96, 0, false>(args...);
  } else {
    if (M == 96 && ct3) return launch_cols<96, 3, false>(args...);
    if (M == 96 && ct2h) return launch_cols<96, 2, true>(args...);
    if (M == 96) return launch_cols<96, 0, false>(args...);
    return launch_cols<192, 0, false>(args...);
  }
}

}  // namespace

bool split_tma_supports(int C, int ks, int stride, bool a_split) {
  return C % 8 == 0 && (!a_split || ks == 1) && (ks == 1 || ks == 3) && (stride == 1 || stride == 2);
}

bool subpixel_supported(int C, int M) { return C % conv_tma::BK == 0 && M != 96; }

namespace {

// The tiles launch_split_tma runs: their shape and schedule, whether 96 or 192 outputs are one column tile,
// whether halo tiles read each tap row once, the outputs a tile.
struct TilePlan {
  conv_tma::ConvTiles t;
  bool cols, halo;
  int MK;
};

TilePlan plan_tiles(int M, const SplitPicture& b, const ConvWindow& w, bool a_split) {
  using namespace conv_tma;
  TilePlan p{};
  ConvTiles& t = p.t;
  t.Ho = w.Ho, t.Wo = w.Wo, t.ks = w.subpixel ? 2 : w.ks, t.stride = w.stride, t.pad_top = w.pad_top,
  t.pad_left = w.pad_left;
  choose_tile(t);
  // 96 or 192 output channels: one tile of all of them as the wgmma's N
  p.cols = !a_split && (M == 96 || M == 192) && !variant_is<Variant::conv_outputs>("rows");
  t.c_tiles = (b.C + BK - 1) / BK;
  // one picture row of 128 outputs a tile at stride 1: each tap row's 130 inputs read once (halo tiles, 96
  // outputs a tile; 192 as two such tiles a position tile, adjacent in the schedule, whose store warps store
  // them and stage their residual, where the column tiles' consumers stored their own)
  p.halo = p.cols && !w.subpixel && w.ks == 3 && w.stride == 1 && t.BW == 128 &&
           halo_rings<96>(t.c_tiles).chunks > 0 && variant_is<Variant::conv_outputs>("auto");
  p.MK = p.halo ? 96 : M;  // output channels a tile
  t.classes = w.subpixel ? 4 : 1;
  t.m_tiles = p.cols ? M / p.MK : (M + BM - 1) / BM;
  t.tiles_x = (w.Wo + t.BW - 1) / t.BW;
  const int64_t tiles = int64_t(t.classes) * t.m_tiles * t.tiles_x * ((w.Ho + t.BH - 1) / t.BH);
  if (tiles >= (int64_t(1) << 31)) fail("split product (TMA): too many output tiles");
  t.tiles = int(tiles);
  t.KT = t.ks * t.ks * t.c_tiles;
  t.KT1 = w.subpixel ? 3 * t.c_tiles : 0;
  t.class_k = (t.KT + t.KT1) * BK;
  return p;
}

// The runs a row whose statistics the plan's kernel's consumers take (slab_stats.cuh): a halo tile's 16 positions
// a consumer warp, a row tile's 128 (each class's own); 0 for the other kernels.
int stats_runs(const TilePlan& p) {
  const int position_tiles = p.t.tiles / p.t.m_tiles;
  if (p.halo) return conv_tma::kStagedPositions / 16 * position_tiles;
  return p.cols ? 0 : position_tiles;
}

}  // namespace

int split_tma_stats_tiles(int M, const SplitPicture& b, const ConvWindow& w, bool halo_tiles) {
  const TilePlan p = plan_tiles(M, b, w, false);
  return p.halo && !halo_tiles ? 0 : stats_runs(p);
}

void launch_split_tma(const __nv_bfloat16* a_hi, const __nv_bfloat16* a_lo, int M, const SplitPicture& b,
                      const ConvWindow& w, const gemm::Epilogue& e, cudaStream_t stream) {
  using namespace conv_tma;
  const bool a_split = a_lo != nullptr;
  if (!split_tma_supports(b.C, w.ks, w.stride, a_split))
    fail("split product (TMA): channels " + std::to_string(b.C) + ", window " + std::to_string(w.ks) + ", stride " +
         std::to_string(w.stride) + " not supported");
  if (w.subpixel && (a_split || w.ks != 3 || w.stride != 1 || w.pad_top != 1 || w.pad_left != 1 ||
                     !subpixel_supported(b.C, M)))
    fail("split product (TMA): sub-pixel classes need a 3x3 stride-1 window padded by 1, channels a multiple of 64 "
         "and outputs other than 96");
  const TilePlan plan = plan_tiles(M, b, w, a_split);
  ConvTiles t = plan.t;
  const bool cols = plan.cols, halo = plan.halo;
  const int MK = plan.MK;
  const bool softmax_step = e.exp_tiles.hi || e.k_block_scale;
  if (softmax_step && !(a_split && w.ks == 1 && w.stride == 1 && w.Ho == 1 && t.BW == BN && !e.residual && !e.bias &&
                        (!e.exp_tiles.hi || (e.exp_tiles.lo && e.exp_tiles.stats &&
                                             e.exp_tiles.tiles == (w.Wo + BN - 1) / BN))))
    fail("split product (TMA): a softmax step needs a split A over a one-row picture, 1x1, no bias or residual, and "
         "for the scores' tiles hi, lo and stats with a stats slot per 128 columns");
  if (e.tile_stats && (a_split || stats_runs(plan) == 0 || e.stats_tiles != stats_runs(plan) ||
                       (e.residual && t.classes > 1)))
    fail("split product (TMA): output statistics need the halo or row tiles, a slot per run (stats_runs) and no "
         "residual the store warps add themselves");

  // A exact: each tap's channels padded to c_tiles * 64 (the K tile's coordinate); A split: one tap,
  // its columns past C read as zeros by TMA; sub-pixel: each class's 4 + 3 taps.
  const int64_t K = w.subpixel ? int64_t(t.classes) * t.class_k : int64_t(w.ks) * w.ks * (a_split ? b.C : t.c_tiles * BK);
  const uint64_t adims[2] = {uint64_t(K), uint64_t(M)}, astrides[1] = {uint64_t(K) * 2};
  const uint32_t abox[2] = {64, uint32_t(cols ? MK : 128)}, ones[3] = {1, 1, 1};
  const CUtensorMap amap = bf16_tensor_map("split product: A", a_hi, 2, adims, astrides, abox, ones);
  const CUtensorMap alo = a_split ? bf16_tensor_map("split product: A lo", a_lo, 2, adims, astrides, abox, ones) : amap;
  const uint64_t bdims[3] = {uint64_t(b.C), uint64_t(b.W), uint64_t(b.H)};
  const uint64_t bstrides[2] = {uint64_t(b.C) * 2, uint64_t(b.W) * b.C * 2};
  const uint32_t bbox[3] = {64, uint32_t(t.BW * w.stride), uint32_t(t.BH * w.stride)};
  const uint32_t bsteps[3] = {1, uint32_t(w.stride), uint32_t(w.stride)};
  const CUtensorMap hmap = bf16_tensor_map("split product: B hi", b.hi, 3, bdims, bstrides, bbox, bsteps);
  const CUtensorMap lmap = bf16_tensor_map("split product: B lo", b.lo, 3, bdims, bstrides, bbox, bsteps);
  if (cols) {
    // 96 input channels: each tap's second K tile read 32 deep through 64-byte-swizzled maps
    t.half_last = b.C % BK == 32;
    const conv_tma::HaloRings rings = halo_rings<96>(t.c_tiles);
    const uint32_t box_rows = halo ? conv_tma::kHaloRows : bbox[1];
    const uint32_t hbox[3] = {64, box_rows, bbox[2]};
    const CUtensorMap hh = halo ? bf16_tensor_map("split product: B hi, halo", b.hi, 3, bdims, bstrides, hbox, bsteps) : hmap;
    const CUtensorMap lh = halo ? bf16_tensor_map("split product: B lo, halo", b.lo, 3, bdims, bstrides, hbox, bsteps) : lmap;
    CUtensorMap w32 = amap, h32 = hh, l32 = lh;
    if (t.half_last) {
      const uint32_t abox32[2] = {32, uint32_t(MK)}, bbox32[3] = {32, box_rows, bbox[2]};
      w32 = bf16_tensor_map("split product: A, 32 deep", a_hi, 2, adims, astrides, abox32, ones, true);
      h32 = bf16_tensor_map("split product: B hi, 32 deep", b.hi, 3, bdims, bstrides, bbox32, bsteps, true);
      l32 = bf16_tensor_map("split product: B lo, 32 deep", b.lo, 3, bdims, bstrides, bbox32, bsteps, true);
    }
    if (halo) launch_cols_any<true>(MK, t, amap, hh, lh, w32, h32, l32, t, rings, e, stream);
    else launch_cols_any<false>(MK, t, amap, hmap, lmap, w32, h32, l32, t, e, stream);
  } else if (a_split) launch<true>(amap, alo, hmap, lmap, t, e, stream);
  else launch<false>(amap, alo, hmap, lmap, t, e, stream);
}

void launch_split_channels_last(const float* x, int C, int Hs, int Ws, bool upsample, const GroupNormApply* norm,
                                __nv_bfloat16* hi, __nv_bfloat16* lo, cudaStream_t stream, __nv_bfloat16* raw_hi,
                                __nv_bfloat16* raw_lo) {
  using conv_tma::split_channels_last;
  if (C % 8 != 0) fail("split_channels_last: channels " + std::to_string(C) + " (a multiple of 8)");
  if (raw_hi && (!norm || upsample || !raw_lo)) fail("split_channels_last: x's own split goes beside a GroupNorm's");
  const int W = upsample ? 2 * Ws : Ws;
  const int64_t positions = int64_t(upsample ? 2 * Hs : Hs) * W;
  constexpr int kP = conv_tma::kSplitPositions;
  const dim3 grid(unsigned((positions + kP - 1) / kP), unsigned((C + 63) / 64));
  const GroupNormApply n = norm ? *norm : GroupNormApply{};
  if (!upsample && positions % 4 == 0 && (reinterpret_cast<uintptr_t>(x) & 15) == 0) {
    const auto kernel = raw_hi ? conv_tma::split_channels_last_rows<true, true>
                        : norm ? conv_tma::split_channels_last_rows<true, false>
                               : conv_tma::split_channels_last_rows<false, false>;
    kernel<<<grid, 256, 0, stream>>>(x, C, positions, n, hi, lo, raw_hi, raw_lo);
    check_launch("split_channels_last_rows");
    return;
  }
  if (raw_hi) launch_split_channels_last(x, C, Hs, Ws, false, nullptr, raw_hi, raw_lo, stream);
  using Kernel = void (*)(const float*, int, int, int, int, int64_t, GroupNormApply, __nv_bfloat16*, __nv_bfloat16*);
  const Kernel kernel = upsample ? (norm ? split_channels_last<true, true> : split_channels_last<true, false>)
                                 : (norm ? split_channels_last<false, true> : split_channels_last<false, false>);
  kernel<<<grid, 256, 0, stream>>>(x, C, Hs, Ws, W, positions, n, hi, lo);
  check_launch("split_channels_last");
}

void launch_split_elementwise(const float* x, int64_t n, __nv_bfloat16* hi, __nv_bfloat16* lo, cudaStream_t stream) {
  if (n == 0) return;
  conv_tma::split_elementwise<<<unsigned((n + 255) / 256), 256, 0, stream>>>(x, n, hi, lo);
  check_launch("split_elementwise");
}

}  // namespace tf::cuda
