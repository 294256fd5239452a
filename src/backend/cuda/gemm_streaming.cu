// Weight-streaming products for few rows: y_i[m, n_i] = bf16(sum_k x[m, k] w_i[n_i, k]) for up to
// four weights that read the same x, in one launch. At m <= 128 the time is reading the weights
// once, so each block streams one 128-row weight tile over its share of k through a 4-stage
// cp.async pipeline (48 KB in flight per block) and multiplies on the tensor cores (mma.sync,
// fp32 accumulation). The k shares are fp32 partials that the tile's last block adds in share
// order. A row's sums depend on neither the row count nor the other rows, so a prompt packed with
// its negative gets its own bytes, and every run the same.
#include "backend/cuda/check.h"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/gemm.h"
#include "backend/cuda/tensor_core.cuh"
#include "core/error.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;   // 8 warps, 16 weight rows each
constexpr int BN = 128;         // weight rows per tile
constexpr int BK = 64;          // k per stage: one 128-byte row
constexpr int kStages = 4;
constexpr int kMaxSplits = 8;
constexpr int kMaxTiles = 4096;  // arrival counters kept zeroed between launches

struct Segment {
  const uint16_t* w;  // [n, k]
  uint16_t* y;        // [m, n]
  float* partial;     // [splits, m, n] when splits > 1
  int* arrivals;      // [tiles]
  int n, first_block;
};

struct Group {
  Segment seg[kMaxStreamingWeights];
  const uint16_t* x;  // [m, k]
  int count, m, k, splits;
};

// Element (row, 16-byte chunk c) of a [rows][64] bf16 tile: chunks XOR-swizzled by row so that
// ldmatrix's eight rows of one chunk hit eight different bank groups.
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * BK + ((chunk ^ (row & 7)) << 3); }

template <int MT>
__device__ __forceinline__ void load_stage(__nv_bfloat16* ws, __nv_bfloat16* xs, const uint16_t* w, const uint16_t* x,
                                           int n0, int n, int m, int k, int k0) {
#pragma unroll
  for (int i = 0; i < BN * 8 / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads, r = c >> 3, ch = c & 7;
    const bool in = n0 + r < n;
    cp_async_16_zfill(ws + swizzled(r, ch), w + (in ? int64_t(n0 + r) * k + k0 + 8 * ch : 0), in ? 16 : 0);
  }
#pragma unroll
  for (int i = 0; i < (16 * MT * 8 + kThreads - 1) / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads, r = c >> 3, ch = c & 7;
    if (c < 16 * MT * 8) {
      const bool in = r < m;
      cp_async_16_zfill(xs + swizzled(r, ch), x + (in ? int64_t(r) * k + k0 + 8 * ch : 0), in ? 16 : 0);
    }
  }
}

// MT: 16-row tiles of x (m <= 16 MT).
template <int MT>
__global__ void __launch_bounds__(kThreads) gemm_streaming_kernel(Group g) {
  extern __shared__ __align__(128) __nv_bfloat16 smem[];  // kStages x ([BN][BK] w, [16 MT][BK] x)
  __shared__ int last;
  constexpr int kStageElems = (BN + 16 * MT) * BK;
  int s = 0;
  while (s + 1 < g.count && int(blockIdx.x) >= g.seg[s + 1].first_block) ++s;
  const Segment& seg = g.seg[s];
  const int local = blockIdx.x - seg.first_block, tile = local / g.splits, split = local % g.splits;
  const int n0 = tile * BN, steps = g.k / BK / g.splits, kbeg = split * steps * BK;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  auto stage_w = [&](int st) { return smem + st * kStageElems; };
  auto stage_x = [&](int st) { return smem + st * kStageElems + BN * BK; };
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < steps) load_stage<MT>(stage_w(st), stage_x(st), seg.w, g.x, n0, seg.n, g.m, g.k, kbeg + st * BK);
    cp_async_commit();
  }

  float acc[MT][2][4] = {};
  for (int step = 0; step < steps; ++step) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // this step's stage has landed for every thread; the stage refilled below is free
    const int next = step + kStages - 1;
    if (next < steps)
      load_stage<MT>(stage_w(next % kStages), stage_x(next % kStages), seg.w, g.x, n0, seg.n, g.m, g.k, kbeg + next * BK);
    cp_async_commit();
    const __nv_bfloat16* ws = stage_w(step % kStages);
    const __nv_bfloat16* xs = stage_x(step % kStages);
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t b[4];  // n rows 0-7: b[0] (k 0-7), b[1] (k 8-15); n rows 8-15: b[2], b[3]
      const int brow = 16 * warp + (lane & 7) + ((lane >> 4) << 3), bch = 2 * kk + ((lane >> 3) & 1);
      ldmatrix_x4(b, ws + swizzled(brow, bch));
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        uint32_t a[4];
        const int arow = 16 * i + (lane & 15), ach = 2 * kk + (lane >> 4);
        ldmatrix_x4(a, xs + swizzled(arow, ach));
        mma_bf16(acc[i][0], a, b[0], b[1]);
        mma_bf16(acc[i][1], a, b[2], b[3]);
      }
    }
  }
  cp_async_wait<0>();

  const int gr = lane / 4, q = lane % 4;
  auto for_each_pair = [&](auto&& f) {  // (row, first of two adjacent columns, the pair's values)
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = 16 * i + gr + 8 * h, col = n0 + 16 * warp + 8 * j + 2 * q;
          if (row < g.m && col < seg.n) f(row, col, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        }
  };
  if (g.splits == 1) {
    for_each_pair([&](int row, int col, float v0, float v1) {
      *reinterpret_cast<uint32_t*>(seg.y + int64_t(row) * seg.n + col) = pack_bf16(v0, v1);
    });
    return;
  }
  float* mine = seg.partial + int64_t(split) * g.m * seg.n;
  for_each_pair([&](int row, int col, float v0, float v1) {
    *reinterpret_cast<float2*>(mine + int64_t(row) * seg.n + col) = make_float2(v0, v1);
  });
  __threadfence();  // the partial is visible device-wide before this block counts as arrived
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(seg.arrivals + tile, 1) == g.splits - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  // the tile's last block: y = bf16(((p0 + p1) + p2) + ...), in share order whoever arrives last
  const int cols = min(BN, seg.n - n0);
  for (int e = 2 * threadIdx.x; e < g.m * BN; e += 2 * kThreads) {
    const int row = e / BN, col = e % BN;
    if (col >= cols) continue;
    const int64_t at = int64_t(row) * seg.n + n0 + col;
    float2 sum = __ldcg(reinterpret_cast<const float2*>(seg.partial + at));
    for (int p = 1; p < g.splits; ++p) {
      const float2 v = __ldcg(reinterpret_cast<const float2*>(seg.partial + int64_t(p) * g.m * seg.n + at));
      sum.x += v.x;
      sum.y += v.y;
    }
    *reinterpret_cast<uint32_t*>(seg.y + at) = pack_bf16(sum.x, sum.y);
  }
  if (threadIdx.x == 0) seg.arrivals[tile] = 0;  // ready for the next launch on the stream
}

constexpr size_t smem_bytes(int mt) { return size_t(kStages) * (BN + 16 * mt) * BK * 2; }

template <int MT>
void launch(const Group& g, int blocks) {
  static const bool configured = [] {
    TF_CUDA(cudaFuncSetAttribute(gemm_streaming_kernel<MT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(smem_bytes(MT))));
    return true;
  }();
  (void)configured;
  gemm_streaming_kernel<MT><<<blocks, kThreads, smem_bytes(MT), stream()>>>(g);
  TF_CUDA_LAUNCH("gemm_streaming_kernel");
}

// Workspace kept across launches: arrival counters (zero between launches) and fp32 partials.
struct Workspace {
  int* arrivals = nullptr;
  float* partial = nullptr;
  size_t partial_floats = 0;
};

Workspace& workspace(size_t partial_floats) {
  static Workspace w;
  if (!w.arrivals) {
    w.arrivals = static_cast<int*>(device_alloc(sizeof(int) * kMaxTiles, "streaming GEMM arrival counters"));
    TF_CUDA(cudaMemsetAsync(w.arrivals, 0, sizeof(int) * kMaxTiles, stream()));
  }
  if (partial_floats > w.partial_floats) {
    if (w.partial) device_free(w.partial);  // stream-ordered: earlier launches still see it
    w.partial = static_cast<float*>(device_alloc(sizeof(float) * partial_floats, "streaming GEMM partial sums"));
    w.partial_floats = partial_floats;
  }
  return w;
}

int tiles_of(int64_t n) { return static_cast<int>((n + BN - 1) / BN); }

}  // namespace

int streaming_splits(int64_t k, int tiles) {
  const int64_t steps = k / BK;
  int s = 1;
  while (s * 2 <= kMaxSplits && int64_t(tiles) * s < 2 * int64_t(sm_count()) && steps % (s * 2) == 0 &&
         steps / (s * 2) >= kStages)
    s *= 2;
  return s;
}

bool gemm_streaming_fits(int64_t m, int64_t k, const void* x, std::span<const StreamingWeight> ws) {
  auto aligned = [](const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; };
  if (m < 1 || m > kStreamingRows || k < BK || k % BK != 0 || k > (int64_t(1) << 24) || !aligned(x, 16)) return false;
  if (ws.empty() || ws.size() > size_t(kMaxStreamingWeights)) return false;
  int64_t tiles = 0;
  for (const StreamingWeight& w : ws) {
    if (w.n < 2 || w.n % 2 != 0 || w.n > (int64_t(1) << 24) || !aligned(w.w, 16) || !aligned(w.y, 4)) return false;
    tiles += tiles_of(w.n);
  }
  return tiles <= kMaxTiles;
}

void gemm_streaming(const void* x, int64_t m, int64_t k, std::span<const StreamingWeight> ws) {
  require(gemm_streaming_fits(m, k, x, ws), "gemm_streaming: geometry outside the kernel's (see gemm_streaming_fits)");
  int tiles = 0;
  int64_t n_total = 0;
  for (const StreamingWeight& w : ws) tiles += tiles_of(w.n), n_total += w.n;
  Group g{};
  g.x = static_cast<const uint16_t*>(x);
  g.count = static_cast<int>(ws.size());
  g.m = static_cast<int>(m);
  g.k = static_cast<int>(k);
  g.splits = streaming_splits(k, tiles);
  Workspace& wk = workspace(g.splits > 1 ? size_t(g.splits) * size_t(m) * size_t(n_total) : 0);
  int block = 0, tile_base = 0;
  int64_t partial_base = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    Segment& s = g.seg[i];
    s.w = static_cast<const uint16_t*>(ws[i].w);
    s.y = static_cast<uint16_t*>(ws[i].y);
    s.n = static_cast<int>(ws[i].n);
    s.first_block = block;
    s.arrivals = wk.arrivals + tile_base;
    s.partial = g.splits > 1 ? wk.partial + partial_base : nullptr;
    block += tiles_of(ws[i].n) * g.splits;
    tile_base += tiles_of(ws[i].n);
    partial_base += int64_t(g.splits) * m * ws[i].n;
  }
  switch ((m + 15) / 16) {
    case 1: return launch<1>(g, block);
    case 2: return launch<2>(g, block);
    case 3: return launch<3>(g, block);
    case 4: return launch<4>(g, block);
    case 5: return launch<5>(g, block);
    case 6: return launch<6>(g, block);
    case 7: return launch<7>(g, block);
    default: return launch<8>(g, block);
  }
}

}  // namespace tf::cuda
