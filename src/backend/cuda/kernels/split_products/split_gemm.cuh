#pragma once
// C[M,N] = alpha * A[M,K] B[K,N] (+ bias[m]) (+ residual[m,n]) on the bf16 tensor cores at
// fp32-class accuracy: every F32 operand is split into a bf16 high part and a bf16 low part
// (x = hi + lo + O(2^-17 |x|)) and the products hi*hi, hi*lo, lo*hi accumulate in fp32.
// A bf16 operand (the published weights) is exact, so it needs no low part.
// Tiles are 128 x 128 x 32, 8 warps (2 along M, 4 along N, 64 x 32 each), double-buffered shared
// memory fed through registers; every output is owned by one thread: no split-K, deterministic.
#include <cuda_bf16.h>
#include <cstdint>

#include "backend/cuda/primitives/tensor_core.cuh"

namespace tf::cuda::gemm {

// The split every fp32 operand enters the tensor cores as: hi = bf16(x), lo = bf16(x - hi), both
// rounded to nearest even; every split kernel and pass uses this one.
__device__ __forceinline__ void split_bf16(float x, __nv_bfloat16& hi, __nv_bfloat16& lo) {
  hi = __float2bfloat16_rn(x);
  lo = __float2bfloat16_rn(__fsub_rn(x, __bfloat162float(hi)));
}

constexpr int BM = 128, BN = 128, BK = 32, THREADS = 256;
constexpr int LDS = BK + 8;  // bf16 row stride in shared memory: 80 bytes, ldmatrix conflict-free
constexpr int TILE_ELEMS = BM * LDS;

// Where an operand tile row r (an M row of A, an N column of B) and depth k live.
// KContig: element (r, k) at p[r * ld + k]; RContig: at p[k * ld + r].
struct F32KContig {
  const float* p;
  int64_t ld;
  int rows, K;
};
struct F32RContig {
  const float* p;
  int64_t ld;
  int rows, K;
};
struct Bf16KContig {  // weights [rows, K], exact in bf16
  const __nv_bfloat16* p;
  int rows, K;
  bool vec16;  // rows start 16-byte aligned (K % 8 == 0)
};
// im2col of a channel-major picture: row r = output position, k = (ci, ky, kx).
template <int KS, int STRIDE, bool UPSAMPLE>
struct ConvGather {
  const float* x;  // [Ci, Hs, Ws]; Hs = H/2 when UPSAMPLE (nearest 2x folded into the read)
  int H, W;        // logical input size (after the folded upsample)
  int Ws;          // stored row width
  int64_t HWs;     // stored plane size
  int Ho, Wo, pad_top, pad_left;
  int rows, K;
};

// im2col with depth ordered tap-major, k = (ky * KS + kx) * Ci + ci (the weights permuted to
// match): with Ci % 32 == 0 one K tile has one tap, so a thread's 16 depths are one bounds check
// and 16 loads one channel plane apart.
template <int STRIDE, bool UPSAMPLE>
struct ConvGatherTapMajor {
  const float* x;  // [Ci, Hs, Ws]
  int H, W, Ws;
  int64_t HWs;
  int Ho, Wo, pad_top, pad_left, Ci, KS;
  int rows, K;
};

// Per-thread registers for one operand tile of ROWS rows x BK depths: V = ROWS * BK / THREADS
// values of one row (KContig, ROWS = 128 only: row t/2, depth (t%2)*16..+15; RContig/gather: row
// t % ROWS, depth (t / ROWS) * V..+V-1). Either way the thread then writes V consecutive depths of
// one smem row.
template <int ROWS>
constexpr int kStageValues = ROWS * BK / THREADS;
template <int V>
struct StageF {
  float v[V];
};
struct StageBf16 {
  uint4 v[2];
};

template <int ROWS>
__device__ __forceinline__ void load_tile(const F32KContig& s, int r0, int k0, StageF<16>& st) {
  static_assert(ROWS == 128, "k-contiguous F32 tiles are 128 rows");
  const int r = r0 + threadIdx.x / 2, kb = k0 + (threadIdx.x % 2) * 16;
  const bool vec = (s.ld % 4 == 0) && ((reinterpret_cast<uintptr_t>(s.p) & 15) == 0);
  if (r < s.rows && vec && kb + 16 <= s.K) {
    const float4* q = reinterpret_cast<const float4*>(s.p + int64_t(r) * s.ld + kb);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float4 f = q[i];
      st.v[4 * i] = f.x, st.v[4 * i + 1] = f.y, st.v[4 * i + 2] = f.z, st.v[4 * i + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i)
      st.v[i] = (r < s.rows && kb + i < s.K) ? s.p[int64_t(r) * s.ld + kb + i] : 0.f;
  }
}

template <int ROWS>
__device__ __forceinline__ void load_tile(const F32RContig& s, int r0, int k0, StageF<kStageValues<ROWS>>& st) {
  constexpr int V = kStageValues<ROWS>;
  const int r = r0 + threadIdx.x % ROWS, kb = k0 + (threadIdx.x / ROWS) * V;
#pragma unroll
  for (int i = 0; i < V; ++i)
    st.v[i] = (r < s.rows && kb + i < s.K) ? s.p[int64_t(kb + i) * s.ld + r] : 0.f;
}

template <int ROWS, int KS, int STRIDE, bool UPSAMPLE>
__device__ __forceinline__ void load_tile(const ConvGather<KS, STRIDE, UPSAMPLE>& s, int r0, int k0,
                                          StageF<kStageValues<ROWS>>& st) {
  constexpr int V = kStageValues<ROWS>;
  const int r = r0 + threadIdx.x % ROWS, kb = k0 + (threadIdx.x / ROWS) * V;
  const int oy = r / s.Wo, ox = r - oy * s.Wo;
  const int iy0 = oy * STRIDE - s.pad_top, ix0 = ox * STRIDE - s.pad_left;
  int ci = kb / (KS * KS);
  int rem = kb - ci * (KS * KS);
  int ky = rem / KS, kx = rem - ky * KS;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int iy = iy0 + ky, ix = ix0 + kx;
    float val = 0.f;
    if (r < s.rows && kb + i < s.K && iy >= 0 && iy < s.H && ix >= 0 && ix < s.W) {
      const int sy = UPSAMPLE ? (iy >> 1) : iy, sx = UPSAMPLE ? (ix >> 1) : ix;
      val = s.x[int64_t(ci) * s.HWs + int64_t(sy) * s.Ws + sx];
    }
    st.v[i] = val;
    if (++kx == KS) {
      kx = 0;
      if (++ky == KS) ky = 0, ++ci;
    }
  }
}

// V depths kb.. of im2col row r (one tap: V channels one plane apart), zeros outside the picture.
template <int V, int STRIDE, bool UPSAMPLE>
__device__ __forceinline__ void gather_tap_major(const ConvGatherTapMajor<STRIDE, UPSAMPLE>& s, int r, int kb,
                                                 float (&v)[V]) {
  const int oy = r / s.Wo, ox = r - oy * s.Wo;
  const int tap = kb / s.Ci, ci0 = kb - tap * s.Ci;
  const int ky = tap / s.KS, kx = tap - ky * s.KS;
  const int iy = oy * STRIDE - s.pad_top + ky, ix = ox * STRIDE - s.pad_left + kx;
  if (r < s.rows && iy >= 0 && iy < s.H && ix >= 0 && ix < s.W) {
    const int sy = UPSAMPLE ? (iy >> 1) : iy, sx = UPSAMPLE ? (ix >> 1) : ix;
    const float* p = s.x + int64_t(ci0) * s.HWs + int64_t(sy) * s.Ws + sx;
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = p[int64_t(i) * s.HWs];
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = 0.f;
  }
}

template <int ROWS, int STRIDE, bool UPSAMPLE>
__device__ __forceinline__ void load_tile(const ConvGatherTapMajor<STRIDE, UPSAMPLE>& s, int r0, int k0,
                                          StageF<kStageValues<ROWS>>& st) {
  constexpr int V = kStageValues<ROWS>;
  gather_tap_major<V>(s, r0 + threadIdx.x % ROWS, k0 + (threadIdx.x / ROWS) * V, st.v);
}

template <int ROWS>
__device__ __forceinline__ void load_tile(const Bf16KContig& s, int r0, int k0, StageBf16& st) {
  static_assert(ROWS == 128, "bf16 weight tiles are 128 rows");
  const int r = r0 + threadIdx.x / 2, kb = k0 + (threadIdx.x % 2) * 16;
  if (r < s.rows && s.vec16 && kb + 16 <= s.K) {
    const uint4* q = reinterpret_cast<const uint4*>(s.p + int64_t(r) * s.K + kb);
    st.v[0] = q[0];
    st.v[1] = q[1];
  } else {
    __align__(16) __nv_bfloat16 tmp[16];
#pragma unroll
    for (int i = 0; i < 16; ++i)
      tmp[i] = (r < s.rows && kb + i < s.K) ? s.p[int64_t(r) * s.K + kb + i] : __float2bfloat16_rn(0.f);
    st.v[0] = *reinterpret_cast<uint4*>(&tmp[0]);
    st.v[1] = *reinterpret_cast<uint4*>(&tmp[8]);
  }
}

template <int ROWS, class Src>
__device__ __forceinline__ int stage_row(const Src&) {
  return threadIdx.x % ROWS;
}
template <int ROWS, class Src>
__device__ __forceinline__ int stage_col(const Src&) {
  return (threadIdx.x / ROWS) * kStageValues<ROWS>;
}
template <int ROWS> __device__ __forceinline__ int stage_row(const F32KContig&) { return threadIdx.x / 2; }
template <int ROWS> __device__ __forceinline__ int stage_col(const F32KContig&) { return (threadIdx.x % 2) * 16; }
template <int ROWS> __device__ __forceinline__ int stage_row(const Bf16KContig&) { return threadIdx.x / 2; }
template <int ROWS> __device__ __forceinline__ int stage_col(const Bf16KContig&) { return (threadIdx.x % 2) * 16; }

// Split V floats into bf16 hi and lo (split_bf16).
template <int ROWS, class Src, int V>
__device__ __forceinline__ void store_tile(const Src& s, const StageF<V>& st, __nv_bfloat16* hi, __nv_bfloat16* lo) {
  __align__(16) __nv_bfloat16 h[V], l[V];
#pragma unroll
  for (int i = 0; i < V; ++i) {
    split_bf16(st.v[i], h[i], l[i]);
  }
  const int off = stage_row<ROWS>(s) * LDS + stage_col<ROWS>(s);
  uint4* dh = reinterpret_cast<uint4*>(hi + off);
  uint4* dl = reinterpret_cast<uint4*>(lo + off);
#pragma unroll
  for (int q = 0; q < V / 8; ++q) {
    dh[q] = *reinterpret_cast<uint4*>(&h[8 * q]);
    dl[q] = *reinterpret_cast<uint4*>(&l[8 * q]);
  }
}

template <int ROWS>
__device__ __forceinline__ void store_tile(const Bf16KContig& s, const StageBf16& st, __nv_bfloat16* hi, __nv_bfloat16*) {
  uint4* d = reinterpret_cast<uint4*>(hi + stage_row<ROWS>(s) * LDS + stage_col<ROWS>(s));
  d[0] = st.v[0];
  d[1] = st.v[1];
}

template <class Src, int ROWS> struct StageOf { using type = StageF<kStageValues<ROWS>>; };
template <int ROWS> struct StageOf<Bf16KContig, ROWS> { using type = StageBf16; };
template <class Src> constexpr bool kSplit = true;
template <> constexpr bool kSplit<Bf16KContig> = false;

// A product whose rows are softmax rows, its softmax taken per 128-column tile (conv_tma_kernel with a split
// A): for row m and tile b, s = alpha * acc over the tile's columns below N, mx = max s, e = exp(s - mx) split
// into bf16 hi and lo at [m, n] (ldc apart), stats[m * tiles + b] = (mx, the fp32 rounding of sum e in double).
struct ExpTiles {
  __nv_bfloat16* hi = nullptr;  // non-null: the product writes e and stats, not c
  __nv_bfloat16* lo = nullptr;
  float2* stats = nullptr;
  int tiles = 0;  // 128-column tiles a row
};

// One output row's values over a run of positions (a halo tile's consumer warp's 16, or a row tile's 128), for
// GroupNorm statistics of the output taken by the consumers that stage it: the count of those inside the picture,
// their sum and sum of squares shifted by k (the run's first value; 0 where none is inside), in fp32.
struct TileStat {
  float s, q, k, n;
};

struct Epilogue {
  float* c;                     // [M, ldc]
  int64_t ldc;
  float alpha;                  // c = alpha * (A B) + bias[m] + residual[m, n]
  const __nv_bfloat16* bias;    // [M] or null
  const float* residual;        // same layout as c, or null
  int M, N;
  ExpTiles exp_tiles{};
  // [ceil(K / 128), N] or null (conv_tma_kernel with a split A): K block b's sums join column n's times
  // k_block_scale[b * N + n] (one fused multiply-add a K tile) instead of plainly
  const float* k_block_scale = nullptr;
  // [M, stats_tiles] or null (the staging consumers, slab_stats.cuh): row m's values over run b summarised at
  // tile_stats[m * stats_tiles + b]
  TileStat* tile_stats = nullptr;
  int stats_tiles = 0;
};

// Whether output pairs may be stored as float2 (even row stride, 8-byte aligned c and residual).
__device__ __forceinline__ bool pairs_vectorised(const Epilogue& e) {
  return (e.ldc % 2 == 0) && ((reinterpret_cast<uintptr_t>(e.c) & 7) == 0) &&
         (!e.residual || (reinterpret_cast<uintptr_t>(e.residual) & 7) == 0);
}

// c[m, n] = alpha * a + bias (+ residual), store_pair's arithmetic for a lone column.
__device__ __forceinline__ void store_one(const Epilogue& e, int m, int n, float bias, float a) {
  const int64_t off = int64_t(m) * e.ldc + n;
  const float v = __fadd_rn(__fmul_rn(e.alpha, a), bias);
  e.c[off] = e.residual ? __fadd_rn(v, e.residual[off]) : v;
}

// c[m, n], c[m, n + 1] = alpha * (a0, a1) + bias (+ residual), each step one fp32 rounding; columns
// at or past N are left alone.
__device__ __forceinline__ void store_pair(const Epilogue& e, bool vec2, int m, int n, float bias, float a0, float a1) {
  float v0 = __fadd_rn(__fmul_rn(e.alpha, a0), bias);
  float v1 = __fadd_rn(__fmul_rn(e.alpha, a1), bias);
  const int64_t off = int64_t(m) * e.ldc + n;
  if (vec2 && n + 1 < e.N) {
    if (e.residual) {
      const float2 r = *reinterpret_cast<const float2*>(e.residual + off);
      v0 = __fadd_rn(v0, r.x), v1 = __fadd_rn(v1, r.y);
    }
    *reinterpret_cast<float2*>(e.c + off) = make_float2(v0, v1);
  } else {
    if (n < e.N) e.c[off] = e.residual ? __fadd_rn(v0, e.residual[off]) : v0;
    if (n + 1 < e.N) e.c[off + 1] = e.residual ? __fadd_rn(v1, e.residual[off + 1]) : v1;
  }
}

// Shared memory: 2 stages x (A hi, A lo, B hi, B lo) tiles.
constexpr size_t kSmemBytes = size_t(2) * 4 * TILE_ELEMS * sizeof(__nv_bfloat16);

// NT: 8-wide n tiles per warp (4: 128-wide block tile, one block per SM; 2: 64-wide, two blocks).
template <class ASrc, class BSrc, int NT = 4>
__global__ void __launch_bounds__(THREADS, NT == 2 ? 2 : 1) split_gemm_kernel(ASrc a, BSrc b, Epilogue e) {
  constexpr int BNT = NT * 32;
  extern __shared__ __align__(16) __nv_bfloat16 smem[];
  constexpr bool a_split = kSplit<ASrc>;
  auto tile = [&](int stage, int which) { return smem + (stage * 4 + which) * TILE_ELEMS; };
  // one-dimensional grid (N tiles can exceed gridDim.y's 65535), M tiles fastest: they share one B
  // tile in L2
  const int m_tiles = (e.M + BM - 1) / BM;
  const int m0 = int(blockIdx.x % m_tiles) * BM, n0 = int(blockIdx.x / m_tiles) * BNT;
  const int K = b.K;
  const int KT = (K + BK - 1) / BK;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * (NT * 8);

  float acc[4][NT][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

  typename StageOf<ASrc, BM>::type sa;
  typename StageOf<BSrc, BNT>::type sb;
  load_tile<BM>(a, m0, 0, sa);
  load_tile<BNT>(b, n0, 0, sb);
  store_tile<BM>(a, sa, tile(0, 0), tile(0, 1));
  store_tile<BNT>(b, sb, tile(0, 2), tile(0, 3));
  __syncthreads();

  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt & 1;
    if (kt + 1 < KT) {
      load_tile<BM>(a, m0, (kt + 1) * BK, sa);
      load_tile<BNT>(b, n0, (kt + 1) * BK, sb);
    }
    const __nv_bfloat16* Ah = tile(s, 0);
    const __nv_bfloat16* Al = tile(s, 1);
    const __nv_bfloat16* Bh = tile(s, 2);
    const __nv_bfloat16* Bl = tile(s, 3);
    // each K tile sums into a fresh accumulator, added to the running one with one fp32 rounding:
    // the tensor cores' accumulation loses low bits when the running sum dwarfs the addends
    float part[4][NT][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) part[i][j][q] = 0.f;
    // the two-block-per-SM tile (128 registers) keeps one k step's fragments live, not two
#pragma unroll(NT == 2 ? 1 : 2)
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t bh[NT][2], bl[NT][2];
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        const int row = wn + j * 8 + (lane % 8) + (lane / 16) * 8;
        const int col = kk + ((lane / 8) % 2) * 8;
        uint32_t r[4];
        ldmatrix_x4(r, Bh + row * LDS + col);
        bh[j][0] = r[0], bh[j][1] = r[1], bh[j + 1][0] = r[2], bh[j + 1][1] = r[3];
        ldmatrix_x4(r, Bl + row * LDS + col);
        bl[j][0] = r[0], bl[j][1] = r[1], bl[j + 1][0] = r[2], bl[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = wm + i * 16 + (lane % 16);
        const int col = kk + (lane / 16) * 8;
        uint32_t ah[4];
        ldmatrix_x4(ah, Ah + row * LDS + col);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          mma_bf16(part[i][j], ah, bl[j][0], bl[j][1]);
          mma_bf16(part[i][j], ah, bh[j][0], bh[j][1]);
        }
        if constexpr (a_split) {
          uint32_t al[4];
          ldmatrix_x4(al, Al + row * LDS + col);
#pragma unroll
          for (int j = 0; j < NT; ++j) mma_bf16(part[i][j], al, bh[j][0], bh[j][1]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = __fadd_rn(acc[i][j][q], part[i][j][q]);
    if (kt + 1 < KT) {
      store_tile<BM>(a, sa, tile(s ^ 1, 0), tile(s ^ 1, 1));
      store_tile<BNT>(b, sb, tile(s ^ 1, 2), tile(s ^ 1, 3));
    }
    __syncthreads();
  }

  const bool vec2 = pairs_vectorised(e);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm + i * 16 + lane / 4 + h * 8;
      if (m >= e.M) continue;
      const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int n = n0 + wn + j * 8 + (lane % 4) * 2;
        store_pair(e, vec2, m, n, bias, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      }
    }
  }
}

}  // namespace tf::cuda::gemm
