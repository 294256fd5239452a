// Weight-streaming products for few rows: y_i[m, n_i] = bf16(sum_k x[m, k] w_i[n_i, k]) for up to
// four weights that read the same x, in one launch. At m <= 128 the time is reading the weights
// once, so each block streams one weight tile (256 or 128 rows) over its share of k through a TMA
// pipeline (as many stages as shared memory holds; one thread asks for each stage's weight and x
// boxes, an mbarrier says they landed), and its two warpgroups multiply with wgmma straight from
// shared memory (half the tile's rows each, as 64-row A tiles; the x rows padded to 8 as B; fp32
// accumulation).
// x is read again for every tile, so tiles are wide and k shares few: blocks fill the GPU once.
// A tile's k shares are one thread-block cluster; their fp32 partials are added in share order
// through distributed shared memory, each block adding a slice of the tile; or (gemm_streaming_shares)
// each share's sums go to global memory as they are, no cluster, for the product's reader to add.
// The gated launch (gemm_streaming_silu_gated) reads gate and up through one 4-D map whose boxes
// alternate 8 rows of each, so each 16-byte piece of a tile's bf16 sums has its partner piece beside
// it and the epilogue writes bf16(bf16(silu(gate)) * up), neither gate nor up going to memory.
// The weights are asked evict-first: read once a forward, they must not push x out of L2.
// A row's sums depend on neither the row count nor the other rows, so a prompt packed with its
// negative gets its own bytes, and every run the same.
#include <cooperative_groups.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/primitives/dependent_launch.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/kernels/linear/gemm.h"
#include "backend/cuda/kernels/linear/gemm_tiles.cuh"
#include "backend/cuda/runtime/tensor_map.h"
#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"
#include "backend/variants.h"
#include "core/error.h"

namespace tf::cuda {

namespace {

using namespace streaming;

constexpr int kMinShareSteps = 4;   // k steps per share at least
constexpr size_t kSmemLimit = 227 * 1024;
constexpr size_t kBarrierBytes = 64;  // one mbarrier per stage
constexpr size_t stage_bytes(int n8, int bn) { return size_t(bn + 8 * n8) * BK * 2; }
// As many stages as shared memory holds, at most 5 of 256-row tiles and 6 of 128- or 192-row ones:
// more and fewer were slower (measured: docs/perf/encoder).
constexpr int max_stages(int bn) { return bn == 256 ? 5 : 6; }
constexpr int stages_for(int n8, int bn) {
  return int(std::min<size_t>(max_stages(bn), (kSmemLimit - 1024 - kBarrierBytes) / stage_bytes(n8, bn)));
}
constexpr int kMaxSplits = 8;  // a portable cluster
// Weight stages a product launched as a dependent asks for before the kernel before it has
// finished: one hides the first data's latency; all of them queue ahead of that kernel's own reads
// and slow it (measured: docs/perf/encoder).
constexpr int kEarlyWeightStages = 1;
// A 64-row A tile or two a warpgroup: two warpgroups, or three for 192-row tiles (one tile each, so
// no warpgroup's MMAs wait on a branch).
constexpr int warpgroups(int bn) { return bn == 192 ? 3 : 2; }
constexpr int block_threads(int bn) { return 128 * warpgroups(bn); }
constexpr int part_stride(int bn) { return bn + 4; }  // floats per x row of a partial tile, against bank conflicts
constexpr int tile_pitch(int bn) { return bn + 8; }   // bf16 per x row of an output tile, 16-byte rows off the banks' period

namespace cg = cooperative_groups;

// How a product's TMA loads ask L2 to keep their lines: the weights are read once a forward, so
// evict-first keeps them from pushing out x (read by every tile) and the small kernels' tensors.
enum class L2Hints : int { none, weights_first };

struct Segment {
  uint16_t* y;  // [m, n]; the gated launch's [m, n / 2]
  int n, first_block;  // n: weight rows (the gated launch's gate and up rows together)
};

struct Group {
  CUtensorMap w_map[kMaxStreamingWeights];  // [n, k] in boxes of [BN][BK]
  CUtensorMap x_map;                        // [m, k] in boxes of [8 N8][BK]
  Segment seg[kMaxStreamingWeights];
  int count, m, k, splits;
  L2Hints hints;
  float* shares;  // non-null: each share's fp32 sums to shares [splits][m][n], no reduction here
};

// y = bf16(((p_0 + p_1) + p_2) + ...) over the cluster's P partial tiles, this block adding its
// BN / P columns. A thread asks for all P partials of kQuads column quads (16-byte remote reads)
// before its first add, so the remote reads' latency is paid about once per kQuads quads.
template <int P, int BN>
__device__ __forceinline__ void add_partials(cg::cluster_group& cluster, float* part, int m, int split, int n0,
                                             const Segment& seg) {
  constexpr int cols = BN / P, kQuads = P <= 4 ? 4 : 2, kPartStride = part_stride(BN), kBlockThreads = block_threads(BN);
  static_assert(cols % 4 == 0 && kPartStride % 4 == 0, "a share's columns come in 16-byte quads");
  const int c0 = split * cols, quads = m * cols / 4;
  const float* src[P];
#pragma unroll
  for (int p = 0; p < P; ++p) src[p] = cluster.map_shared_rank(part, p);
  for (int first = threadIdx.x; first < quads; first += kBlockThreads * kQuads) {
    float4 v[kQuads][P];
#pragma unroll
    for (int u = 0; u < kQuads; ++u) {
      const int e = 4 * (first + u * kBlockThreads), row = e / cols, col = c0 + e % cols;
      if (first + u * kBlockThreads < quads)
#pragma unroll
        for (int p = 0; p < P; ++p) v[u][p] = *reinterpret_cast<const float4*>(src[p] + row * kPartStride + col);
    }
#pragma unroll
    for (int u = 0; u < kQuads; ++u) {
      const int e = 4 * (first + u * kBlockThreads), row = e / cols, col = c0 + e % cols;
      if (first + u * kBlockThreads >= quads) continue;
      float4 sum = v[u][0];
#pragma unroll
      for (int p = 1; p < P; ++p) {
        sum.x += v[u][p].x;
        sum.y += v[u][p].y;
        sum.z += v[u][p].z;
        sum.w += v[u][p].w;
      }
      uint16_t* dst = seg.y + int64_t(row) * seg.n + n0 + col;  // n is even: a pair is all in or all out
      if (n0 + col < seg.n) *reinterpret_cast<uint32_t*>(dst) = pack_bf16(sum.x, sum.y);
      if (n0 + col + 2 < seg.n) *reinterpret_cast<uint32_t*>(dst + 2) = pack_bf16(sum.z, sum.w);
    }
  }
}

// The gated launch's output from its tile in bf16 ([8 N8][pitch], the tile's weight rows as
// columns): columns 16 i .. 16 i + 7 are gate features f0 + 8 i .. + 7 and columns 16 i + 8 ..
// 16 i + 15 their up features, so each 16-byte piece of y is bf16(bf16(silu(gate)) * up) of two
// 16-byte pieces of the tile.
template <int BN>
__device__ __forceinline__ void store_gated_tile(const uint16_t* tile, int pitch, int m, const Segment& seg, int f0) {
  constexpr int kPieces = BN / 16, kBlockThreads = block_threads(BN);
  const int n = seg.n / 2;                                            // y's columns, a multiple of 8
  const bool whole = (reinterpret_cast<uintptr_t>(seg.y) & 15) == 0;
  for (int p = threadIdx.x; p < m * kPieces; p += kBlockThreads) {
    const int row = p / kPieces, i = p % kPieces;
    if (f0 + 8 * i >= n) continue;
    float gate[8], up[8];
    ld_bf16x<8>(tile + row * pitch + 16 * i, gate);
    ld_bf16x<8>(tile + row * pitch + 16 * i + 8, up);
#pragma unroll
    for (int e = 0; e < 8; ++e) gate[e] = silu_gated(gate[e], up[e]);
    uint16_t* dst = seg.y + int64_t(row) * n + f0 + 8 * i;
    if (whole) st_bf16x<8>(dst, gate);
    else
      for (int e = 0; e < 8; ++e) dst[e] = st_bf16(gate[e]);
  }
}

// N8: 8-row tiles of x (m <= 8 N8), the products' N in eights. Gated: w_map[0] is gate and up as
// [n / 8][2][8][k], and y [m, n] = bf16(bf16(silu(gate)) * up).
template <int N8, int BN, bool Gated>
__global__ void __launch_bounds__(block_threads(BN)) gemm_streaming_kernel(const __grid_constant__ Group g) {
  extern __shared__ unsigned char smem_raw[];  // kStages x ([BN][BK] w, [8 N8][BK] x), 1024-aligned
  constexpr int kStageElems = (BN + 8 * N8) * BK, kStages = stages_for(N8, BN);
  constexpr int H = BN / 64 / warpgroups(BN), kBlockThreads = block_threads(BN);  // per warpgroup: H 64-row A tiles
  constexpr int kPartStride = part_stride(BN), kTilePitch = tile_pitch(BN);
  auto* smem = reinterpret_cast<__nv_bfloat16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  int s = 0;
  while (s + 1 < g.count && int(blockIdx.x) >= g.seg[s + 1].first_block) ++s;
  const Segment& seg = g.seg[s];
  const int local = blockIdx.x - seg.first_block, tile = local / g.splits, split = local % g.splits;
  const int n0 = tile * BN, steps = g.k / BK / g.splits, kbeg = split * steps * BK;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;  // warpgroup wg: weight rows 64 H wg ..

  auto stage_w = [&](int st) { return smem + st * kStageElems; };
  auto stage_x = [&](int st) { return smem + st * kStageElems + BN * BK; };
  auto* full = reinterpret_cast<uint64_t*>(smem + kStages * kStageElems);  // [kStages]: the stage has landed
  const uint64_t w_policy = l2_policy_evict_first();
  auto load_w = [&](int st, int step) {  // one thread; rows past n or m land as zeros
    mbarrier_arrive_expect_tx(&full[st], uint32_t(kStageElems * 2));
    if constexpr (Gated) {  // BN / 16 groups of 8 gate rows then their 8 up rows
      if (g.hints == L2Hints::weights_first)
        tma_load_4d_hinted(stage_w(st), &g.w_map[0], &full[st], kbeg + step * BK, 0, 0, n0 / 16, w_policy);
      else
        tma_load_4d(stage_w(st), &g.w_map[0], &full[st], kbeg + step * BK, 0, 0, n0 / 16);
    } else if (g.hints == L2Hints::weights_first)
      tma_load_2d_hinted(stage_w(st), &g.w_map[s], &full[st], kbeg + step * BK, n0, w_policy);
    else
      tma_load_2d(stage_w(st), &g.w_map[s], &full[st], kbeg + step * BK, n0);
  };
  auto load_x = [&](int st, int step) { tma_load_2d(stage_x(st), &g.x_map, &full[st], kbeg + step * BK, 0); };
  const int first = min(kStages - 1, steps), early = min(kEarlyWeightStages, first);
  if (threadIdx.x == 0) {
    for (int st = 0; st < kStages; ++st) mbarrier_init(&full[st], 1);
    mbarrier_init_fence();
    for (int st = 0; st < early; ++st) load_w(st, st);  // weights do not depend on the kernel before
  }
  wait_for_prerequisite_grid();
  if (threadIdx.x == 0) {
    for (int st = early; st < first; ++st) load_w(st, st);
    for (int st = 0; st < first; ++st) load_x(st, st);
  }
  __syncthreads();

  float acc[H][4 * N8] = {};  // per warpgroup: H [64 weight rows] x [8 N8 x rows]
  for (int step = 0; step < steps; ++step) {
    mbarrier_wait(&full[step % kStages], uint32_t(step / kStages) & 1);
    const uint64_t xd = wgmma_descriptor(stage_x(step % kStages));
#pragma unroll
    for (int h = 0; h < H; ++h) wgmma_fence_registers(acc[h]);
    wgmma_fence();
#pragma unroll
    for (int h = 0; h < H; ++h) {
      const uint64_t wd = wgmma_descriptor(stage_w(step % kStages) + 64 * (H * wg + h) * BK);
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        wgmma_m64k16_bf16<8 * N8>(acc[h], wgmma_descriptor_at_k16(wd, kk), wgmma_descriptor_at_k16(xd, kk));
    }
    wgmma_commit();
    // this step's MMAs run on while the previous step's stage is released and refilled
    wgmma_wait<1>();
#pragma unroll
    for (int h = 0; h < H; ++h) wgmma_fence_registers(acc[h]);
    __syncthreads();  // both warpgroups are past the previous step's MMAs, so its stage may be refilled
    const int next = step + kStages - 1;
    if (threadIdx.x == 0 && next < steps) {
      load_w(next % kStages, next);
      load_x(next % kStages, next);
    }
  }
  wgmma_wait_all();
#pragma unroll
  for (int h = 0; h < H; ++h) wgmma_fence_registers(acc[h]);
  allow_dependent_launch();  // a dependent after this product may start: only the epilogue is left

  auto for_each_value = [&](auto&& f) {  // (x row, weight column, value)
    const int r = 64 * H * wg + 16 * (t / 32) + (t % 32) / 4, q = t % 4;
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
      for (int j = 0; j < N8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = 8 * j + 2 * q + (e & 1), col = n0 + r + 64 * h + 8 * (e >> 1);
          if (row < g.m && col < seg.n) f(row, col, acc[h][4 * j + e]);
        }
  };
  __syncthreads();  // the other warpgroup's last MMAs have read the stages the epilogue overwrites
  if (g.splits == 1) {
    // the tile in bf16 through shared memory, then whole 16-byte pieces of each row to y
    auto* tile = reinterpret_cast<uint16_t*>(smem);  // [8 N8][kTilePitch]
    for_each_value([&](int row, int col, float v) { tile[row * kTilePitch + col - n0] = st_bf16(v); });
    __syncthreads();
    // from the bf16 tile, not the accumulators: a second reader of them makes ptxas serialise every wgmma (C7515)
    if constexpr (Gated) return store_gated_tile<BN>(tile, kTilePitch, g.m, seg, n0 / 2);
    const int cols = min(BN, seg.n - n0);
    const bool whole = seg.n % 8 == 0 && (reinterpret_cast<uintptr_t>(seg.y) & 15) == 0;
    for (int p = threadIdx.x; p < g.m * (BN / 8); p += kBlockThreads) {
      const int row = p / (BN / 8), c = 8 * (p % (BN / 8));
      if (c >= cols) continue;
      uint16_t* dst = seg.y + int64_t(row) * seg.n + n0 + c;
      const uint16_t* src = tile + row * kTilePitch + c;
      if (whole) *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
      else
        for (int e = 0; e < 8 && c + e < cols; ++e) dst[e] = src[e];
    }
    return;
  }
  auto* part = reinterpret_cast<float*>(smem);
  if (g.shares) {
    // this share's sums through shared memory to its rows of shares[split], whole 16-byte pieces
    for_each_value([&](int row, int col, float v) { part[row * kPartStride + col - n0] = v; });
    __syncthreads();
    float* dst0 = g.shares + int64_t(split) * g.m * seg.n + n0;
    const int cols = min(BN, seg.n - n0);
    const bool whole = seg.n % 4 == 0 && (reinterpret_cast<uintptr_t>(g.shares) & 15) == 0;
    for (int p = threadIdx.x; p < g.m * (BN / 4); p += kBlockThreads) {
      const int row = p / (BN / 4), c = 4 * (p % (BN / 4));
      if (c >= cols) continue;
      float* dst = dst0 + int64_t(row) * seg.n + c;
      const float* src = part + row * kPartStride + c;
      if (whole) *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);
      else
        for (int e = 0; e < 4 && c + e < cols; ++e) dst[e] = src[e];
    }
    return;
  }
  // this share's partial tile [8 N8 x rows][BN weight rows] in the stages' memory, then
  // y = bf16(((p_0 + p_1) + p_2) + ...) with each block of the cluster adding BN / splits columns
  for_each_value([&](int row, int col, float v) { part[row * kPartStride + col - n0] = v; });
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every share's partial is written
  switch (g.splits) {
    case 2: add_partials<2, BN>(cluster, part, g.m, split, n0, seg); break;
    case 4: add_partials<4, BN>(cluster, part, g.m, split, n0, seg); break;
    default: add_partials<kMaxSplits, BN>(cluster, part, g.m, split, n0, seg); break;  // 8 (streaming_splits)
  }
  cluster.sync();  // no block leaves while another still reads its partial
}

constexpr size_t smem_bytes(int n8, int bn) { return size_t(stages_for(n8, bn)) * stage_bytes(n8, bn) + 1024 + kBarrierBytes; }

static_assert(size_t(8) * 16 * part_stride(256) * 4 + 1024 <= smem_bytes(16, 256) &&
                  size_t(8) * part_stride(256) * 4 + 1024 <= smem_bytes(1, 256) &&
                  size_t(8) * 16 * part_stride(128) * 4 + 1024 <= smem_bytes(16, 128) &&
                  size_t(8) * part_stride(128) * 4 + 1024 <= smem_bytes(1, 128),
              "a partial tile must fit in the stages' shared memory");
static_assert(size_t(8) * 16 * part_stride(192) * 4 + 1024 <= smem_bytes(16, 192),
              "a partial tile must fit in the stages' shared memory");
static_assert(max_stages(128) * 8 <= kBarrierBytes && max_stages(192) * 8 <= kBarrierBytes &&
                  max_stages(256) * 8 <= kBarrierBytes,
              "one mbarrier a stage");

// attr: room for two, the cluster (every launch but the k-share sums') and the dependent launch
cudaLaunchConfig_t launch_config(const void* kernel, size_t smem, int blocks, int threads, int splits, bool cluster,
                                 cudaLaunchAttribute* attr) {
  static std::mutex mu;
  static std::map<const void*, bool> configured;
  {
    std::lock_guard<std::mutex> l(mu);
    if (!configured[kernel]) {
      TF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      configured[kernel] = true;
    }
  }
  cudaLaunchConfig_t cfg{};
  int n = 0;
  if (cluster) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = splits;
    attr[n].val.clusterDim.y = attr[n].val.clusterDim.z = 1;
    ++n;
  }
  if (dependent_launches()) attr[n++] = programmatic_dependence();
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream();
  cfg.attrs = attr;
  cfg.numAttrs = n;
  return cfg;
}

template <int N8, int BN, bool Gated>
void launch(const Group& g, int blocks) {
  cudaLaunchAttribute attr[2]{};
  // no cluster for shares: they are added by the product's consumer
  cudaLaunchConfig_t cfg = launch_config(reinterpret_cast<const void*>(gemm_streaming_kernel<N8, BN, Gated>),
                                         smem_bytes(N8, BN), blocks, block_threads(BN), g.splits, !g.shares, attr);
  TF_CUDA(cudaLaunchKernelEx(&cfg, gemm_streaming_kernel<N8, BN, Gated>, g));
  mark_streaming_launch(true);
}

// The instantiation for n8 eight-row tiles of x, 1 .. 16, and tiles of bn weight rows.
template <bool Gated = false, int N8 = 1>
void launch_for(int n8, int bn, const Group& g, int blocks) {
  if constexpr (N8 < 16) {
    if (n8 > N8) return launch_for<Gated, N8 + 1>(n8, bn, g, blocks);
  }
  if (bn == 128) launch<N8, 128, Gated>(g, blocks);
  else if (bn == 192) launch<N8, 192, Gated>(g, blocks);
  else launch<N8, 256, Gated>(g, blocks);
}

// Clusters of `splits` blocks that fit on the GPU at once, for every instantiation (both tile
// heights): <16, 256> holds an SM's shared memory alone, the fewest blocks an SM of any of them.
static_assert(2 * smem_bytes(16, 256) > kSmemLimit, "<16, 256> must be one block an SM, the least any instantiation fits");
int clusters_that_fit(int splits) {
  static std::mutex mu;
  static std::map<int, int> known;
  {
    std::lock_guard<std::mutex> l(mu);
    auto it = known.find(splits);
    if (it != known.end()) return it->second;
  }
  cudaLaunchAttribute attr[2]{};
  cudaLaunchConfig_t cfg = launch_config(reinterpret_cast<const void*>(gemm_streaming_kernel<16, 256, false>),
                                         smem_bytes(16, 256), splits * 16, block_threads(256), splits, true, attr);
  cfg.numAttrs = 1;  // the cluster alone
  int clusters = 0;
  TF_CUDA(cudaOccupancyMaxActiveClusters(&clusters, gemm_streaming_kernel<16, 256, false>, &cfg));
  std::lock_guard<std::mutex> l(mu);
  return known.emplace(splits, clusters).first->second;
}

// TF_STREAMING_L2=none leaves L2's default policy to the weights (to compare).
L2Hints streaming_l2_hints() {
  return variant_is<Variant::streaming_l2>("weights_first") ? L2Hints::weights_first : L2Hints::none;
}

int tiles_of(int64_t n, int bn) { return static_cast<int>((n + bn - 1) / bn); }

// [rows, k] bf16 in boxes of [box_rows][BK] (128-byte rows, the swizzle wgmma reads).
CUtensorMap rows_map(const char* what, const void* p, int64_t rows, int64_t k, int box_rows) {
  const uint64_t dims[2] = {uint64_t(k), uint64_t(rows)}, strides[1] = {uint64_t(k) * 2};
  const uint32_t box[2] = {uint32_t(BK), uint32_t(box_rows)}, ones[2] = {1, 1};
  return bf16_tensor_map(what, p, 2, dims, strides, box, ones);
}

// A weight's map, made once per (pointer, shape): a map holds only the address and shape, so an
// address reused by another weight of the same shape still gets a right one.
CUtensorMap weight_map(const void* w, int64_t n, int64_t k, int bn) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int64_t, int64_t, int>, CUtensorMap> maps;
  std::lock_guard<std::mutex> l(mu);
  auto key = std::make_tuple(w, n, k, bn);
  auto it = maps.find(key);
  if (it == maps.end()) it = maps.emplace(key, rows_map("streaming product: weight", w, n, k, bn)).first;
  return it->second;
}

// The most k shares, a power of two up to kMaxSplits, that keep every block of `tiles` tiles on the
// GPU at once and give each share kMinShareSteps steps or more; `allowed(s)` may refuse s shares.
template <class Allowed>
int most_shares(int64_t k, int64_t tiles, Allowed&& allowed) {
  const int64_t steps = k / BK;
  int s = 1;
  while (s * 2 <= kMaxSplits && tiles * s * 2 <= int64_t(sm_count()) && steps % (s * 2) == 0 &&
         steps / (s * 2) >= kMinShareSteps && allowed(s * 2))
    s *= 2;
  return s;
}

// The fields every launch sets: rows, k, shares, the L2 hints and x's map (8 n8 rows a box).
Group group_on(const void* x, int64_t m, int64_t k, int splits, int n8) {
  Group g{};
  g.m = static_cast<int>(m);
  g.k = static_cast<int>(k);
  g.splits = splits;
  g.hints = streaming_l2_hints();
  g.x_map = rows_map("streaming product: x", x, m, k, 8 * n8);
  return g;
}

int x_tiles_of(int64_t m) { return static_cast<int>(std::min<int64_t>(16, (m + 7) / 8)); }

}  // namespace

int streaming_splits(int64_t k, int tiles) {
  return most_shares(k, tiles, [&](int s) { return tiles <= clusters_that_fit(s); });
}

int streaming_share_count(int64_t k, int64_t n) {
  if (k < BK || k % BK != 0 || n < 2 || n % 2 != 0) return 0;
  const int p = most_shares(k, tiles_of(n, 128), [](int) { return true; });
  return p >= 2 ? p : 0;
}

bool gemm_streaming_fits(int64_t m, int64_t k, const void* x, std::span<const StreamingWeight> ws) {
  auto aligned = [](const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; };
  if (m < 1 || m > kStreamingRows || k < BK || k % BK != 0 || k > (int64_t(1) << 24) || !aligned(x, 16)) return false;
  if (ws.empty() || ws.size() > size_t(kMaxStreamingWeights)) return false;
  for (const StreamingWeight& w : ws)
    if (w.n < 2 || w.n % 2 != 0 || w.n > (int64_t(1) << 24) || !aligned(w.w, 16) || !aligned(w.y, 4)) return false;
  return true;
}

// TF_STREAMING_TILE_192=off keeps 256-row tiles where 192-row ones would be chosen (to compare).
bool tiles_of_192_allowed() { return variant_is<Variant::streaming_tile_192>("on"); }

int streaming_tile_rows(int64_t k, std::span<const StreamingWeight> ws) {
  int t256 = 0, t192 = 0, t128 = 0;
  for (const StreamingWeight& w : ws) t256 += tiles_of(w.n, 256), t192 += tiles_of(w.n, 192), t128 += tiles_of(w.n, 128);
  if (streaming_splits(k, t256) > 1 && t128 <= sm_count()) return 128;
  // one share a 256-row tile, SMs idle: 192-row tiles stream on more of them where they still fit at once
  if (tiles_of_192_allowed() && streaming_splits(k, t256) == 1 && t192 > t256 && t192 <= sm_count() &&
      streaming_splits(k, t192) == 1)
    return 192;
  return 256;
}

void gemm_streaming_shares(const void* x, int64_t m, int64_t k, const void* w, int64_t n, float* shares) {
  const StreamingWeight one{w, shares, n};
  require(gemm_streaming_fits(m, k, x, std::span(&one, 1)),
          "gemm_streaming_shares: geometry outside the kernel's (see gemm_streaming_fits)");
  const int P = streaming_share_count(k, n);
  require(P >= 2, "gemm_streaming_shares: no k shares for k " + std::to_string(k) + ", n " + std::to_string(n));
  const int n8 = x_tiles_of(m);
  Group g = group_on(x, m, k, P, n8);
  g.count = 1;
  g.shares = shares;
  g.w_map[0] = weight_map(w, n, k, 128);
  g.seg[0] = Segment{nullptr, static_cast<int>(n), 0};
  launch_for(n8, 128, g, tiles_of(n, 128) * P);
}

bool gemm_streaming_silu_gated(const void* x, int64_t m, int64_t k, const void* w_gate, const void* w_up, int64_t n,
                               void* y) {
  const StreamingWeight ws[2] = {{w_gate, y, n}, {w_up, y, n}};
  const auto a = reinterpret_cast<uintptr_t>(w_gate), b = reinterpret_cast<uintptr_t>(w_up);
  // one map over both weights: up a whole positive number of 16-byte units after gate
  if (!gemm_streaming_fits(m, k, x, ws) || n % 8 != 0 || b <= a || (b - a) % 16 != 0 || b - a >= (uint64_t(1) << 40))
    return false;
  const int bn = streaming_tile_rows(k, ws), tiles = tiles_of(2 * n, bn);
  if (streaming_splits(k, tiles) != 1) return false;  // the epilogue needs both sums whole
  const int n8 = x_tiles_of(m);
  Group g = group_on(x, m, k, 1, n8);
  g.count = 1;
  const uint64_t dims[4] = {uint64_t(k), 8, 2, uint64_t(n / 8)}, strides[3] = {uint64_t(k) * 2, b - a, uint64_t(k) * 16};
  const uint32_t box[4] = {uint32_t(BK), 8, 2, uint32_t(bn / 16)}, ones[4] = {1, 1, 1, 1};
  g.w_map[0] = bf16_tensor_map("streaming gated product: gate and up", w_gate, 4, dims, strides, box, ones);
  g.seg[0] = Segment{static_cast<uint16_t*>(y), static_cast<int>(2 * n), 0};
  launch_for<true>(n8, bn, g, tiles);
  return true;
}

void gemm_streaming(const void* x, int64_t m, int64_t k, std::span<const StreamingWeight> ws, int tile_rows) {
  require(gemm_streaming_fits(m, k, x, ws), "gemm_streaming: geometry outside the kernel's (see gemm_streaming_fits)");
  require(tile_rows == 0 || tile_rows == 128 || tile_rows == 192 || tile_rows == 256,
          "gemm_streaming: tile_rows is " + std::to_string(tile_rows) + ", expected 0 (chosen), 128, 192 or 256");
  const int bn = tile_rows ? tile_rows : streaming_tile_rows(k, ws);
  int tiles = 0;
  for (const StreamingWeight& w : ws) tiles += tiles_of(w.n, bn);
  const int splits = streaming_splits(k, tiles), n8 = x_tiles_of(m);
  require(splits == 1 || splits == 2 || splits == 4 || splits == kMaxSplits,
          "gemm_streaming: the kernel adds 1, 2, 4 or 8 k shares");
  Group g = group_on(x, m, k, splits, n8);
  g.count = static_cast<int>(ws.size());
  int block = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    g.w_map[i] = weight_map(ws[i].w, ws[i].n, k, bn);
    Segment& s = g.seg[i];
    s.y = static_cast<uint16_t*>(ws[i].y);
    s.n = static_cast<int>(ws[i].n);
    s.first_block = block;
    block += tiles_of(ws[i].n, bn) * g.splits;
  }
  launch_for(n8, bn, g, block);
}

}  // namespace tf::cuda
