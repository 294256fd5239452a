// The gated delta rule in the chunked (WY) form on CUDA, fp32 FFMA throughout (the order of
// backend/cpu/delta_rule_chunked.cpp). Three kernels:
//   chunk_prep_kernel, one block per (chunk, value head, sequence), all chunks at once: the decays,
//     L and M from the chunk's Gram products, A = (I + L)^-1 in 16-row blocks, W = A X and U = A Y;
//   chunk_states_kernel, one block per (32 state columns, value head, sequence), chunks in order:
//     each chunk's starting state S_c kept, V' = U - W S_c, S = exp(G_last) S + K^T V'';
//   chunk_output_kernel, one block per (chunk, 64 columns, value head, sequence), all chunks at once:
//     O = exp(G) Q S_c + M V'.
#include <algorithm>
#include <string>

#include "backend/cuda/check.h"
#include "backend/cuda/delta_rule_chunked.h"
#include "backend/cuda/tensor_core.cuh"
#include "backend/cuda/transformer_ops.h"
#include "backend/gated_delta_rule.h"

namespace tf::cuda {

namespace {

constexpr int kC = static_cast<int>(kDeltaRuleChunk);
constexpr int kMaxDim = 128;  // dk and dv the kernels hold
constexpr int kPitch = 132;   // [64][128] tiles: float4 rows of a warp land in distinct banks
constexpr int kPitchC = 68;   // [64][65] tiles (decays, L, A, M)
constexpr int kSlice = 32;    // state columns per states block
constexpr int kHalf = 64;     // output columns per output block
constexpr int kPitchS = 36;   // [*][32] tiles
constexpr int kThreads = 256;
constexpr int kGramTiles = (kC / 4) * (kC / 4 + 1) / 2;  // 4x4 tiles on or below the diagonal
constexpr int kDecay0 = 160;  // the decay threads, kC + 1 of them, a warp boundary past the Gram's
constexpr int kBlk = 16;      // the inverse's block rows
constexpr int kPitchT = 52;   // [16][48] block-row products
static_assert(kGramTiles <= kDecay0 && kDecay0 + kC < kThreads && kDecay0 % 32 == 0, "prep thread roles overlap");
static_assert(kC % kBlk == 0 && kC / kBlk * kBlk <= kThreads, "the diagonal blocks' columns are one thread each");

// The prep kernel's outputs, token-major like the inputs: W, U [T, Hv, 128] (zero past dk, dv),
// M [T, Hv, 64] (row i of its chunk, zero past the diagonal), eG = exp(G_i), eL = E_{last,i} [T, Hv].
struct ChunkWork {
  float* W;
  float* U;  // then V'
  float* H;  // [chunks][Hv][128][128] the state at each chunk's start
  float* M;
  float* eG;
  float* eL;
};

constexpr size_t kPrepSmem = sizeof(float) * (2 * kC * kPitch + 2 * kC * kPitchC + kBlk * kPitchT + 3 * kC);
constexpr int kStageFloats = 2 * kC * kPitch + kC * kPitchS + 2 * kC;  // one chunk's W, K, U, eL, eG
constexpr size_t kStatesSmem = sizeof(float) * (kMaxDim * kPitchS + kC * kPitchS + 2 * kStageFloats);
constexpr size_t kOutputSmem = sizeof(float) * (kC * kPitch + kMaxDim * kPitchC + 2 * kC * kPitchC + kC);

__device__ __forceinline__ float4 ld4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ float at(const float4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// acc[c] += a.x b0[c] + a.y b1[c] + a.z b2[c] + a.w b3[c], one fma each, in that order.
__device__ __forceinline__ void fma4x4(float (&acc)[4], const float4& a, const float4 (&b)[4]) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    acc[c] = __fmaf_rn(a.x, at(b[0], c), acc[c]);
    acc[c] = __fmaf_rn(a.y, at(b[1], c), acc[c]);
    acc[c] = __fmaf_rn(a.z, at(b[2], c), acc[c]);
    acc[c] = __fmaf_rn(a.w, at(b[3], c), acc[c]);
  }
}

// The sequence's chunk this block prepares, or n = 0 when it has none.
struct ChunkSpan {
  int c0 = 0, n = 0;
};
__device__ __forceinline__ ChunkSpan chunk_of(const SeqTable& seqs, int s, int chunk, int min_len) {
  const int start = seqs.offsets[s], len = seqs.offsets[s + 1] - start;
  ChunkSpan c;
  if (len < min_len || chunk * kC >= len) return c;
  c.c0 = start + chunk * kC;
  c.n = min(kC, len - chunk * kC);
  return c;
}

// A = (I + L)^-1 in 16-row blocks (the order of the CPU's invert_unit_lower), first the diagonal
// blocks by forward substitution, column m of block b in thread 16 b + m's registers (A [64][68]).
__device__ __forceinline__ void invert_diagonal_blocks(const float* L, float* A, int tid) {
  const int b = tid / kBlk, m = tid % kBlk, base = b * kBlk;
  float a[kBlk];
#pragma unroll
  for (int i = 0; i < kBlk; ++i) {
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < i; ++j) s = __fmaf_rn(L[(base + i) * kPitchC + base + j], a[j], s);
    a[i] = i < m ? 0.0f : i == m ? 1.0f : -s;  // a[j] = 0 below m: the sum starts at j = m
  }
#pragma unroll
  for (int i = 0; i < kBlk; ++i) A[(base + i) * kPitchC + base + m] = a[i];
}

// Then the block rows in turn, every thread: T = L A over the rows above, A = -D T, each output's
// sum in one chain (T [16][52]).
__device__ __forceinline__ void invert_block_rows(const float* L, float* A, float* T, int tid) {
  #pragma unroll
  for (int bi = 1; bi < kC / kBlk; ++bi) {
    const int width = bi * kBlk, row0 = bi * kBlk;
    for (int idx = tid; idx < kBlk * width; idx += kThreads) {
      const int r = idx / width, c = idx % width;
      const float* Lr = L + (row0 + r) * kPitchC;
      float s = 0.0f;
      for (int x = c; x < width; ++x) s = __fmaf_rn(Lr[x], A[x * kPitchC + c], s);  // A[x][c] = 0 for x < c
      T[r * kPitchT + c] = s;
    }
    __syncthreads();
    for (int idx = tid; idx < kBlk * width; idx += kThreads) {
      const int r = idx / width, c = idx % width;
      const float* Dr = A + (row0 + r) * kPitchC + row0;
      float s = 0.0f;
      for (int x = 0; x <= r; ++x) s = __fmaf_rn(Dr[x], T[x * kPitchT + c], s);
      A[(row0 + r) * kPitchC + c] = -s;
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kThreads, 2)
    chunk_prep_kernel(const float* q, const float* k, const float* v, const float* beta, const float* g, SeqTable seqs,
                      int min_len, ChunkWork ws, int Hk, int dk, int Hv, int dv, bool rows16, bool v16) {
  extern __shared__ __align__(16) float sm[];
  float* Ks = sm;                  // [64][132] keys, then X = (beta exp(G)) k
  float* Qs = Ks + kC * kPitch;    // [64][132] queries, then Y = beta v
  float* E = Qs + kC * kPitch;     // [64][68] E[i][j + 1] = exp(g_{j+1} + .. + g_i), then A
  float* L = E + kC * kPitchC;     // [64][68] strictly lower
  float* T = L + kC * kPitchC;     // [16][52] the inverse's block-row products
  float* gs = T + kBlk * kPitchT;  // [64]
  float* bs = gs + kC;             // [64]
  float* eG = bs + kC;             // [64]
  const ChunkSpan span = chunk_of(seqs, blockIdx.z, blockIdx.x, min_len);
  if (span.n == 0) return;
  const int h = blockIdx.y, hk = h / (Hv / Hk), tid = threadIdx.x, c0 = span.c0, n = span.n;

  // Keys and queries, zero past n rows and dk columns, so every sum below may run over whole tiles.
  if (rows16) {
    for (int idx = tid; idx < kC * kMaxDim / 4; idx += kThreads) {
      const int i = idx / (kMaxDim / 4), c = 4 * (idx % (kMaxDim / 4));
      const bool real = i < n && c < dk;
      const int64_t src = (int64_t(c0 + i) * Hk + hk) * dk + c;
      const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      *reinterpret_cast<float4*>(Ks + i * kPitch + c) = real ? ld4(k + src) : zero;
      *reinterpret_cast<float4*>(Qs + i * kPitch + c) = real ? ld4(q + src) : zero;
    }
  } else {
    for (int idx = tid; idx < kC * kMaxDim; idx += kThreads) {
      const int i = idx / kMaxDim, c = idx % kMaxDim;
      const bool real = i < n && c < dk;
      const int64_t src = (int64_t(c0 + i) * Hk + hk) * dk + c;
      Ks[i * kPitch + c] = real ? k[src] : 0.0f;
      Qs[i * kPitch + c] = real ? q[src] : 0.0f;
    }
  }
  if (tid < kC) {
    gs[tid] = tid < n ? g[int64_t(c0 + tid) * Hv + h] : 0.0f;
    bs[tid] = tid < n ? beta[int64_t(c0 + tid) * Hv + h] : 0.0f;
  }
  __syncthreads();

  // Gram products on the 4x4 tiles on or below the diagonal (threads below kGramTiles), sums over
  // the key dim in order; meanwhile the decays (kDecay0 on): thread `col` runs its own sum from
  // token col on, so E near the diagonal carries only the rounding of the few terms it spans.
  const int dk4 = (dk + 3) & ~3;
  float kk[4][4] = {}, qk[4][4] = {};
  int ti = 0, tj = 0;
  if (tid < kGramTiles) {
    while ((ti + 1) * (ti + 2) / 2 <= tid) ++ti;
    tj = tid - ti * (ti + 1) / 2;
    for (int c = 0; c < dk4; c += 4) {
      float4 ki[4], qi[4], kj[4];
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        ki[a] = ld4(Ks + (4 * ti + a) * kPitch + c);
        qi[a] = ld4(Qs + (4 * ti + a) * kPitch + c);
        kj[a] = ld4(Ks + (4 * tj + a) * kPitch + c);
      }
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          kk[a][b] = __fmaf_rn(ki[a].x, kj[b].x, kk[a][b]);
          kk[a][b] = __fmaf_rn(ki[a].y, kj[b].y, kk[a][b]);
          kk[a][b] = __fmaf_rn(ki[a].z, kj[b].z, kk[a][b]);
          kk[a][b] = __fmaf_rn(ki[a].w, kj[b].w, kk[a][b]);
          qk[a][b] = __fmaf_rn(qi[a].x, kj[b].x, qk[a][b]);
          qk[a][b] = __fmaf_rn(qi[a].y, kj[b].y, qk[a][b]);
          qk[a][b] = __fmaf_rn(qi[a].z, kj[b].z, qk[a][b]);
          qk[a][b] = __fmaf_rn(qi[a].w, kj[b].w, qk[a][b]);
        }
    }
  } else if (tid >= kDecay0 && tid <= kDecay0 + kC) {
    const int col = tid - kDecay0;
    if (col >= 1) E[(col - 1) * kPitchC + col] = 1.0f;
    float D = 0.0f;
    for (int i = col; i < n; ++i) {
      D = __fadd_rn(D, gs[i]);
      E[i * kPitchC + col] = expf(D);
    }
  }
  __syncthreads();
  if (tid < kC) {
    eG[tid] = tid < n ? E[tid * kPitchC] : 0.0f;
    if (tid < n) {
      const int64_t th = int64_t(c0 + tid) * Hv + h;
      ws.eG[th] = E[tid * kPitchC];
      ws.eL[th] = E[(n - 1) * kPitchC + tid + 1];
    }
  }
  // L = beta_i (k_i . k_j) E_ij (j < i) and M = (q_i . k_j) E_ij (j <= i).
  if (tid < kGramTiles) {
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int i = 4 * ti + a;
      float m[4];
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int j = 4 * tj + b;
        const float e = E[i * kPitchC + j + 1];
        if (j < i) L[i * kPitchC + j] = __fmul_rn(__fmul_rn(bs[i], kk[a][b]), e);
        m[b] = j <= i ? __fmul_rn(qk[a][b], e) : 0.0f;
      }
      if (i < n)
        *reinterpret_cast<float4*>(ws.M + (int64_t(c0 + i) * Hv + h) * kC + 4 * tj) = make_float4(m[0], m[1], m[2], m[3]);
    }
  }
  for (int idx = tid; idx < kC * kC / 4; idx += kThreads) {  // M above the diagonal tiles
    const int i = idx / (kC / 4), jq = idx % (kC / 4);
    if (i < n && jq > i / 4)
      *reinterpret_cast<float4*>(ws.M + (int64_t(c0 + i) * Hv + h) * kC + 4 * jq) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  __syncthreads();

  // A = (I + L)^-1 (E is spent: A takes its place); while the first warps invert the diagonal
  // blocks, the others scale keys and values into X and Y.
  float* A = E;
  if (tid < kC) {
    invert_diagonal_blocks(L, A, tid);
  } else if (v16) {
    // Every value load in flight before the first is used: 16-byte pieces, a fixed count a thread.
    constexpr int kPieces = kC * kMaxDim / 4, kPer = (kPieces + kThreads - kC - 1) / (kThreads - kC);
    float4 vv[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int idx = tid - kC + u * (kThreads - kC), j = idx / (kMaxDim / 4), c = 4 * (idx % (kMaxDim / 4));
      vv[u] = idx < kPieces && j < n && c < dv ? ld4(v + (int64_t(c0 + j) * Hv + h) * dv + c) : make_float4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int idx = tid - kC + u * (kThreads - kC), j = idx / (kMaxDim / 4), c = 4 * (idx % (kMaxDim / 4));
      if (idx >= kPieces) continue;
      const float xs = __fmul_rn(bs[j], eG[j]);
      float4& x = *reinterpret_cast<float4*>(Ks + j * kPitch + c);
      x = make_float4(__fmul_rn(xs, x.x), __fmul_rn(xs, x.y), __fmul_rn(xs, x.z), __fmul_rn(xs, x.w));
      *reinterpret_cast<float4*>(Qs + j * kPitch + c) = make_float4(
          __fmul_rn(bs[j], vv[u].x), __fmul_rn(bs[j], vv[u].y), __fmul_rn(bs[j], vv[u].z), __fmul_rn(bs[j], vv[u].w));
    }
  } else {
    for (int idx = tid - kC; idx < kC * kMaxDim; idx += kThreads - kC) {
      const int j = idx / kMaxDim, c = idx % kMaxDim;
      Ks[j * kPitch + c] = __fmul_rn(__fmul_rn(bs[j], eG[j]), Ks[j * kPitch + c]);
      Qs[j * kPitch + c] = j < n && c < dv ? __fmul_rn(bs[j], v[(int64_t(c0 + j) * Hv + h) * dv + c]) : 0.0f;
    }
  }
  __syncthreads();
  invert_block_rows(L, A, T, tid);

  // [W | U] = A [X | Y]: thread (rg, cg) holds rows rg + 4m and 4 of the 256 columns; row i needs
  // j <= i only, so a block of four j skips the rows above it (A is zero there).
  const int cg = tid % 64, rg = tid / 64;
  const bool is_x = cg < 32;
  const float* B = (is_x ? Ks : Qs) + 4 * (cg % 32);
  float acc[16][4] = {};
  const int jbs = (n + 3) / 4;
  for (int jb = 0; jb < jbs; ++jb) {
    float4 b[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) b[x] = ld4(B + (4 * jb + x) * kPitch);
#pragma unroll
    for (int m = 0; m < 16; ++m)
      if (m >= jb) fma4x4(acc[m], ld4(A + (rg + 4 * m) * kPitchC + 4 * jb), b);
  }
  float* dst = is_x ? ws.W : ws.U;
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    const int i = rg + 4 * m;
    if (i < n)
      *reinterpret_cast<float4*>(dst + (int64_t(c0 + i) * Hv + h) * kMaxDim + 4 * (cg % 32)) =
          make_float4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]);
  }
}

// The sequence's first chunk in the state workspace: chunks of the chunked sequences before it.
__device__ __forceinline__ int chunk_base(const SeqTable& seqs, int s, int min_len) {
  int base = 0;
  for (int x = 0; x < s; ++x) {
    const int len = seqs.offsets[x + 1] - seqs.offsets[x];
    if (len >= min_len) base += (len + kC - 1) / kC;
  }
  return base;
}

// A row of `width` floats a row into shared memory: 16-byte copies where the rows allow them.
__device__ __forceinline__ void stage_rows(float* dst, int pitch, const float* src, int64_t stride, int n, int width,
                                           bool by16, int tid) {
  const int per = by16 ? width / 4 : width;
  for (int p = tid; p < n * per; p += kThreads) {
    const int i = p / per, x = p % per;
    if (by16) cp_async_16(dst + i * pitch + 4 * x, src + i * stride + 4 * x);
    else cp_async_4(dst + i * pitch + x, src + i * stride + x);
  }
}

// The state's recurrence over chunks, one block per (32 state columns, value head, sequence):
// S_c to ws.H, V' = U - W S_c over U in place, S_{c+1} = exp(G_last) S_c + K^T V'', V'' = E_{last,j} V'.
// A chunk's inputs do not depend on the state, so chunk c + 1's are copied in while chunk c runs.
__global__ void __launch_bounds__(kThreads, 1)
    chunk_states_kernel(const float* k, SeqTable seqs, int min_len, ChunkWork ws, int Hk, int dk, int Hv,
                        bool rows16) {
  extern __shared__ __align__(16) float sm[];
  float* Ss = sm;                        // [128][36] the state's columns col0 .. col0 + 31
  float* Vpp = Ss + kMaxDim * kPitchS;   // [64][36] V''
  float* stages = Vpp + kC * kPitchS;    // two of: W [64][132], K [64][132], U [64][36], eL [64], eG [64]
  const int s = blockIdx.z, h = blockIdx.y, hk = h / (Hv / Hk), col0 = blockIdx.x * kSlice, tid = threadIdx.x;
  const int start = seqs.offsets[s], len = seqs.offsets[s + 1] - start;
  if (len < min_len || len == 0) return;
  const int chunks = (len + kC - 1) / kC, base = chunk_base(seqs, s, min_len);

  // Zero everything once: padding rows and columns stay zero, and no sum meets uninitialised bits.
  for (int i = tid; i < int(kStatesSmem / sizeof(float)); i += kThreads) sm[i] = 0.0f;
  __syncthreads();

  struct Stage {
    float *W, *K, *U, *eL, *eG;
  };
  auto stage_of = [&](int c) {
    float* p = stages + (c & 1) * kStageFloats;
    return Stage{p, p + kC * kPitch, p + 2 * kC * kPitch, p + 2 * kC * kPitch + kC * kPitchS,
                 p + 2 * kC * kPitch + kC * kPitchS + kC};
  };
  auto stage = [&](int c) {
    const Stage st = stage_of(c);
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    stage_rows(st.W, kPitch, ws.W + (int64_t(c0) * Hv + h) * kMaxDim, int64_t(Hv) * kMaxDim, n, kMaxDim, true, tid);
    stage_rows(st.K, kPitch, k + (int64_t(c0) * Hk + hk) * dk, int64_t(Hk) * dk, n, dk, rows16, tid);
    stage_rows(st.U, kPitchS, ws.U + (int64_t(c0) * Hv + h) * kMaxDim + col0, int64_t(Hv) * kMaxDim, n, kSlice, true,
               tid);
    stage_rows(st.eL, 1, ws.eL + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
    stage_rows(st.eG, 1, ws.eG + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
  };

  const int rg = tid / 8, cg = tid % 8;  // V' rows rg, rg + 32; state rows 4 rg .. 4 rg + 3; columns 4 cg ..
  const int dk4 = (dk + 3) & ~3;
  stage(0);
  cp_async_commit();
  for (int c = 0; c < chunks; ++c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    const Stage st = stage_of(c);
    if (c + 1 < chunks) stage(c + 1);  // into the buffers chunk c - 1 left at its last barrier
    cp_async_commit();
    cp_async_wait<1>();  // chunk c's copies
    __syncthreads();

    // V' = U - W S over the key dim in order (zero past n), to U's place; V'' kept.
    float acc[2][4] = {};
    #pragma unroll 4
    for (int r = 0; r < dk4; r += 4) {
      float4 sv[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) sv[x] = ld4(Ss + (r + x) * kPitchS + 4 * cg);
#pragma unroll
      for (int m = 0; m < 2; ++m) fma4x4(acc[m], ld4(st.W + (rg + 32 * m) * kPitch + r), sv);
    }
#pragma unroll
    for (int m = 0; m < 2; ++m) {
      const int i = rg + 32 * m;
      float vp[4], vpp[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        vp[x] = i < n ? __fsub_rn(st.U[i * kPitchS + 4 * cg + x], acc[m][x]) : 0.0f;
        vpp[x] = i < n ? __fmul_rn(st.eL[i], vp[x]) : 0.0f;
      }
      if (i < n)
        *reinterpret_cast<float4*>(ws.U + (int64_t(c0 + i) * Hv + h) * kMaxDim + col0 + 4 * cg) =
            make_float4(vp[0], vp[1], vp[2], vp[3]);
      *reinterpret_cast<float4*>(Vpp + i * kPitchS + 4 * cg) = make_float4(vpp[0], vpp[1], vpp[2], vpp[3]);
    }
    __syncthreads();

    // S_c out, then S = exp(G_last) S + K^T V'', j in order; each thread owns its 4 x 4 of S.
    if (4 * rg < dk) {
      const float last = st.eG[n - 1];
      float* Hc = ws.H + (int64_t(base + c) * Hv + h) * kMaxDim * kMaxDim + col0 + 4 * cg;
      float sa[4][4];
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        const float4 row = ld4(Ss + (4 * rg + a) * kPitchS + 4 * cg);
        *reinterpret_cast<float4*>(Hc + (4 * rg + a) * kMaxDim) = row;
        sa[a][0] = __fmul_rn(last, row.x);
        sa[a][1] = __fmul_rn(last, row.y);
        sa[a][2] = __fmul_rn(last, row.z);
        sa[a][3] = __fmul_rn(last, row.w);
      }
      #pragma unroll 4
      for (int j = 0; j < n; ++j) {
        const float4 kj = ld4(st.K + j * kPitch + 4 * rg), vj = ld4(Vpp + j * kPitchS + 4 * cg);
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const float ka = at(kj, a);
          sa[a][0] = __fmaf_rn(ka, vj.x, sa[a][0]);
          sa[a][1] = __fmaf_rn(ka, vj.y, sa[a][1]);
          sa[a][2] = __fmaf_rn(ka, vj.z, sa[a][2]);
          sa[a][3] = __fmaf_rn(ka, vj.w, sa[a][3]);
        }
      }
#pragma unroll
      for (int a = 0; a < 4; ++a)
        *reinterpret_cast<float4*>(Ss + (4 * rg + a) * kPitchS + 4 * cg) = make_float4(sa[a][0], sa[a][1], sa[a][2], sa[a][3]);
    }
    __syncthreads();
  }
  cp_async_wait<0>();
}

// The outputs, every chunk at once, one block per (chunk and 64-column half, value head, sequence):
// O = bf16(exp(G_i) Q S_c + M V'), the sums over the key dim and then j in order.
__global__ void __launch_bounds__(kThreads, 2)
    chunk_output_kernel(const float* q, SeqTable seqs, int min_len, ChunkWork ws, uint16_t* o, int Hk, int dk, int Hv,
                        int dv, bool rows16) {
  extern __shared__ __align__(16) float sm[];
  float* Qs = sm;                        // [64][132]
  float* Sh = Qs + kC * kPitch;          // [128][68] S_c's columns col0 .. col0 + 63
  float* Vh = Sh + kMaxDim * kPitchC;    // [64][68] V'
  float* Ms = Vh + kC * kPitchC;         // [64][68]
  float* eGs = Ms + kC * kPitchC;        // [64]
  const int chunk = blockIdx.x / 2, col0 = (blockIdx.x % 2) * kHalf;
  const ChunkSpan span = chunk_of(seqs, blockIdx.z, chunk, min_len);
  if (span.n == 0 || col0 >= dv) return;
  const int h = blockIdx.y, hk = h / (Hv / Hk), tid = threadIdx.x, c0 = span.c0, n = span.n;
  const int slot = chunk_base(seqs, blockIdx.z, min_len) + chunk;

  // Rows past n and key columns past dk stay zero, so the sums may run over whole tiles.
  for (int i = tid; i < kC * kPitch; i += kThreads) Qs[i] = 0.0f;
  for (int i = tid; i < kC * kPitchC; i += kThreads) Vh[i] = 0.0f;
  __syncthreads();
  // Two groups: what Q S needs, then what the M V' sum and the scaling need.
  stage_rows(Qs, kPitch, q + (int64_t(c0) * Hk + hk) * dk, int64_t(Hk) * dk, n, dk, rows16, tid);
  const int dk4 = (dk + 3) & ~3;  // the state rows the sums read
  stage_rows(Sh, kPitchC, ws.H + (int64_t(slot) * Hv + h) * kMaxDim * kMaxDim + col0, kMaxDim, dk4, kHalf, true, tid);
  cp_async_commit();
  stage_rows(Vh, kPitchC, ws.U + (int64_t(c0) * Hv + h) * kMaxDim + col0, int64_t(Hv) * kMaxDim, n, kHalf, true, tid);
  stage_rows(Ms, kPitchC, ws.M + (int64_t(c0) * Hv + h) * kC, int64_t(Hv) * kC, n, kC, true, tid);
  stage_rows(eGs, 1, ws.eG + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
  cp_async_commit();
  cp_async_wait<1>();
  __syncthreads();

  const int rg = tid / 16, cg = tid % 16;  // rows rg + 16 m, columns col0 + 4 cg ..
  float acc[4][4] = {};
  #pragma unroll 2
  for (int r = 0; r < dk4; r += 4) {
    float4 sv[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) sv[x] = ld4(Sh + (r + x) * kPitchC + 4 * cg);
#pragma unroll
    for (int m = 0; m < 4; ++m) fma4x4(acc[m], ld4(Qs + (rg + 16 * m) * kPitch + r), sv);
  }
  cp_async_wait<0>();
  __syncthreads();
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const int i = rg + 16 * m;
    float out[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) out[x] = __fmul_rn(eGs[i], acc[m][x]);
    #pragma unroll 2
    for (int jb = 0; jb <= i / 4; ++jb) {  // M is zero past the diagonal
      float4 vv[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) vv[x] = ld4(Vh + (4 * jb + x) * kPitchC + 4 * cg);
      fma4x4(out, ld4(Ms + i * kPitchC + 4 * jb), vv);
    }
    if (i >= n) continue;
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int col = col0 + 4 * cg + x;
      if (col < dv) o[(int64_t(c0 + i) * Hv + h) * dv + col] = st_bf16(out[x]);
    }
  }
}

}  // namespace

void launch_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                               const SeqTable& seqs, int min_len, Tensor& o) {
  const int T = int(q.dim(0)), Hk = int(q.dim(1)), dk = int(q.dim(2)), Hv = int(v.dim(1)), dv = int(v.dim(2));
  if (dk > kMaxDim || dv > kMaxDim)
    fail("gated_delta_rule_chunked: the CUDA kernels hold key and value head dims up to " + std::to_string(kMaxDim) +
         ", got dk " + std::to_string(dk) + ", dv " + std::to_string(dv));
  int most_chunks = 0, all_chunks = 0;
  for (int s = 0; s < seqs.count; ++s) {
    const int len = seqs.offsets[s + 1] - seqs.offsets[s];
    if (len < min_len || len == 0) continue;
    most_chunks = std::max(most_chunks, (len + kC - 1) / kC);
    all_chunks += (len + kC - 1) / kC;
  }
  if (most_chunks == 0 || Hv == 0 || dv == 0) return;
  Tensor W = empty(DType::F32, {T, Hv, kMaxDim}, Device::CUDA), U = empty(DType::F32, {T, Hv, kMaxDim}, Device::CUDA);
  Tensor M = empty(DType::F32, {T, Hv, kC}, Device::CUDA), eG = empty(DType::F32, {T, Hv}, Device::CUDA),
         eL = empty(DType::F32, {T, Hv}, Device::CUDA);
  Tensor H = empty(DType::F32, {all_chunks, Hv, kMaxDim, kMaxDim}, Device::CUDA);
  ChunkWork ws{W.ptr<float>(), U.ptr<float>(), H.ptr<float>(), M.ptr<float>(), eG.ptr<float>(), eL.ptr<float>()};
  const bool rows16 = dk % 4 == 0 && (reinterpret_cast<uintptr_t>(q.data) & 15) == 0 &&
                      (reinterpret_cast<uintptr_t>(k.data) & 15) == 0;

  const bool v16 = dv % 4 == 0 && (reinterpret_cast<uintptr_t>(v.data) & 15) == 0;
  TF_CUDA(cudaFuncSetAttribute(chunk_prep_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPrepSmem)));
  dim3 prep_grid(unsigned(most_chunks), unsigned(Hv), unsigned(seqs.count));
  chunk_prep_kernel<<<prep_grid, kThreads, kPrepSmem, stream()>>>(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(),
                                                                  beta.ptr<float>(), g.ptr<float>(), seqs, min_len, ws,
                                                                  Hk, dk, Hv, dv, rows16, v16);
  TF_CUDA_LAUNCH("chunk_prep_kernel");

  TF_CUDA(cudaFuncSetAttribute(chunk_states_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kStatesSmem)));
  dim3 states_grid(unsigned((dv + kSlice - 1) / kSlice), unsigned(Hv), unsigned(seqs.count));
  chunk_states_kernel<<<states_grid, kThreads, kStatesSmem, stream()>>>(k.ptr<float>(), seqs, min_len, ws, Hk, dk, Hv,
                                                                        rows16);
  TF_CUDA_LAUNCH("chunk_states_kernel");

  TF_CUDA(cudaFuncSetAttribute(chunk_output_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kOutputSmem)));
  dim3 output_grid(unsigned(2 * most_chunks), unsigned(Hv), unsigned(seqs.count));
  chunk_output_kernel<<<output_grid, kThreads, kOutputSmem, stream()>>>(q.ptr<float>(), seqs, min_len, ws,
                                                                        static_cast<uint16_t*>(o.data), Hk, dk, Hv, dv,
                                                                        rows16);
  TF_CUDA_LAUNCH("chunk_output_kernel");
}

void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o) {
  if (q.dim(0) == 0) return;
  launch_delta_rule_chunked(q, k, v, beta, g, make_seq_table("gated_delta_rule_chunked", seq_offsets), 0, o);
}

}  // namespace tf::cuda
