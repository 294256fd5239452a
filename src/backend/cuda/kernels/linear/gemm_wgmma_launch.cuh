#pragma once
// Host side of gemm_wgmma.cuh for one epilogue: tensor maps, tiles, the persistent grid (one block an
// SM at most). Each epilogue's .cu instantiates it once.
#include <algorithm>
#include <string>

#include "backend/cuda/kernels/elementwise/situ_tables.h"
#include "backend/cuda/kernels/linear/gemm_wgmma.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/runtime/launch_check.h"
#include "backend/cuda/runtime/tensor_map.h"

namespace tf::cuda::wgmma_product {

// [rows, k] bf16, rows of k, read (or written) in 128 x 64 boxes.
inline CUtensorMap operand_map(const char* what, const void* p, int64_t rows, int64_t k) {
  const uint64_t dims[2] = {uint64_t(k), uint64_t(rows)}, strides[1] = {uint64_t(k) * 2};
  const uint32_t box[2] = {BK, 128}, ones[2] = {1, 1};
  return bf16_tensor_map(what, p, 2, dims, strides, box, ones);
}

template <GemmEpilogue E>
void launch(const GemmWgmma& g, const float* tables) {
  auto kernel = gemm_wgmma_kernel<E>;
  static const bool attr = [&] {  // the dynamic shared-memory limit, raised once per instantiation
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
               "gemm_wgmma_kernel: shared memory limit");
    return true;
  }();
  (void)attr;
  Tiles s{};
  s.M = int(g.m), s.N = int(g.n), s.KT = int((g.k + BK - 1) / BK);
  s.m_tiles = int((g.m + BM - 1) / BM);
  s.n_tiles = int((g.n + kTileCols<E> - 1) / kTileCols<E>);
  const int64_t tiles = int64_t(s.m_tiles) * s.n_tiles;
  if (tiles >= (int64_t(1) << 31)) fail("gemm_wgmma: too many output tiles");
  s.tiles = int(tiles);
  s.gate = static_cast<const uint16_t*>(g.gate);
  if (tables) s.gate_factor = tables, s.up_factor = tables + kSituPatterns;
  const CUtensorMap xm = operand_map("gemm_wgmma: x", g.x, g.m, g.k), wm = operand_map("gemm_wgmma: w", g.w, g.n, g.k);
  const CUtensorMap w2m = E == GemmEpilogue::situ ? operand_map("gemm_wgmma: w2", g.w2, g.n, g.k) : wm;
  const CUtensorMap ym = operand_map("gemm_wgmma: y", g.y, g.m, g.n);  // [m, n]: 128 rows of 64 a box
  mark_streaming_launch(false);
  kernel<<<unsigned(std::min(s.tiles, sm_count())), THREADS, kSmemBytes, stream()>>>(xm, wm, w2m, ym, s);
  check_launch("gemm_wgmma_kernel");
}

}  // namespace tf::cuda::wgmma_product
