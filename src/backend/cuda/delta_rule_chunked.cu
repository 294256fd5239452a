// The gated delta rule in the chunked (WY) form on CUDA, fp32 FFMA throughout (the order of
// backend/cpu/delta_rule_chunked.cpp). Two kernels:
//   chunk_prep_kernel, one block per (chunk, value head, sequence), all chunks at once: the decays,
//     L and M from the chunk's Gram products, A = (I + L)^-1, then W = A X and U = A Y;
//   chunk_pass_kernel, one block per (32 state columns, value head, sequence), chunks in order:
//     V' = U - W S, O = exp(G) Q S + M V', S = exp(G_last) S + K^T V'', the state slice in shared memory.
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
constexpr int kSlice = 32;    // state columns per pass block
constexpr int kPitchS = 36;   // [*][32] tiles
constexpr int kThreads = 256;
constexpr int kGramTiles = (kC / 4) * (kC / 4 + 1) / 2;  // 4x4 tiles on or below the diagonal

// The prep kernel's outputs, token-major like the inputs: W, U [T, Hv, 128] (zero past dk, dv),
// M [T, Hv, 64] (row i of its chunk, zero past the diagonal), eG = exp(G_i), eL = E_{last,i} [T, Hv].
struct ChunkWork {
  float* W;
  float* U;
  float* M;
  float* eG;
  float* eL;
};

constexpr size_t kPrepSmem = sizeof(float) * (2 * kC * kPitch + 2 * kC * kPitchC + 3 * kC);
constexpr size_t kPassSmem =
    sizeof(float) * (kMaxDim * kPitchS + 2 * kC * kPitch + kC * kPitch + kC * kPitchC + 3 * kC * kPitchS + 2 * kC);

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

__global__ void __launch_bounds__(kThreads, 2)
    chunk_prep_kernel(const float* q, const float* k, const float* v, const float* beta, const float* g, SeqTable seqs,
                      int min_len, ChunkWork ws, int Hk, int dk, int Hv, int dv) {
  extern __shared__ __align__(16) float sm[];
  float* Ks = sm;                  // [64][132] keys, then X = (beta exp(G)) k
  float* Qs = Ks + kC * kPitch;    // [64][132] queries, then Y = beta v
  float* E = Qs + kC * kPitch;     // [64][68] E[i][j + 1] = exp(g_{j+1} + .. + g_i), then A
  float* L = E + kC * kPitchC;     // [64][68] strictly lower
  float* gs = L + kC * kPitchC;    // [64]
  float* bs = gs + kC;             // [64]
  float* eG = bs + kC;             // [64]
  const ChunkSpan span = chunk_of(seqs, blockIdx.z, blockIdx.x, min_len);
  if (span.n == 0) return;
  const int h = blockIdx.y, hk = h / (Hv / Hk), tid = threadIdx.x, c0 = span.c0, n = span.n;

  // Keys and queries, zero past n rows and dk columns, so every sum below may run over whole tiles.
  for (int idx = tid; idx < kC * kMaxDim; idx += kThreads) {
    const int i = idx / kMaxDim, c = idx % kMaxDim;
    const bool real = i < n && c < dk;
    const int64_t src = (int64_t(c0 + i) * Hk + hk) * dk + c;
    Ks[i * kPitch + c] = real ? k[src] : 0.0f;
    Qs[i * kPitch + c] = real ? q[src] : 0.0f;
  }
  if (tid < kC) {
    gs[tid] = tid < n ? g[int64_t(c0 + tid) * Hv + h] : 0.0f;
    bs[tid] = tid < n ? beta[int64_t(c0 + tid) * Hv + h] : 0.0f;
  }
  __syncthreads();

  // Decays: thread `col` runs its own sum from token col on, so E near the diagonal carries only
  // the rounding of the few terms it spans (a difference of prefix sums would carry |G| u).
  if (tid <= kC) {
    const int col = tid;
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

  // Gram products on the 4x4 tiles on or below the diagonal: L = beta_i (k_i . k_j) E_ij (j < i)
  // and M = (q_i . k_j) E_ij (j <= i), sums over the key dim in order.
  const int dk4 = (dk + 3) & ~3;
  if (tid < kGramTiles) {
    int ti = 0;
    while ((ti + 1) * (ti + 2) / 2 <= tid) ++ti;
    const int tj = tid - ti * (ti + 1) / 2;
    float kk[4][4] = {}, qk[4][4] = {};
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
  for (int idx = tid; idx < kC * kC; idx += kThreads) {  // M above the diagonal tiles
    const int i = idx / kC, j = idx % kC;
    if (i < n && j / 4 > i / 4) ws.M[(int64_t(c0 + i) * Hv + h) * kC + j] = 0.0f;
  }
  __syncthreads();

  // A = (I + L)^-1 by forward substitution, one column per thread (columns are independent):
  // A[i][m] = -sum_{m <= j < i} L[i][j] A[j][m], in four interleaved partial sums. E is spent, A
  // takes its place. Meanwhile the other warps scale keys and values into X and Y.
  float* A = E;
  if (tid < kC) {
    const int m = tid;
    for (int i = 0; i < m; ++i) A[i * kPitchC + m] = 0.0f;
    A[m * kPitchC + m] = 1.0f;
    for (int i = m + 1; i < kC; ++i) {
      float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
      if (i < n) {
        const float* Li = L + i * kPitchC;
        int j = m;
        for (; j + 3 < i; j += 4) {
          s0 = __fmaf_rn(Li[j], A[j * kPitchC + m], s0);
          s1 = __fmaf_rn(Li[j + 1], A[(j + 1) * kPitchC + m], s1);
          s2 = __fmaf_rn(Li[j + 2], A[(j + 2) * kPitchC + m], s2);
          s3 = __fmaf_rn(Li[j + 3], A[(j + 3) * kPitchC + m], s3);
        }
        if (j < i) s0 = __fmaf_rn(Li[j], A[j * kPitchC + m], s0);
        if (j + 1 < i) s1 = __fmaf_rn(Li[j + 1], A[(j + 1) * kPitchC + m], s1);
        if (j + 2 < i) s2 = __fmaf_rn(Li[j + 2], A[(j + 2) * kPitchC + m], s2);
      }
      A[i * kPitchC + m] = -__fadd_rn(__fadd_rn(s0, s1), __fadd_rn(s2, s3));
    }
  } else {
    for (int idx = tid - kC; idx < kC * kMaxDim; idx += kThreads - kC) {
      const int j = idx / kMaxDim, c = idx % kMaxDim;
      Ks[j * kPitch + c] = __fmul_rn(__fmul_rn(bs[j], eG[j]), Ks[j * kPitch + c]);
      Qs[j * kPitch + c] = j < n && c < dv ? __fmul_rn(bs[j], v[(int64_t(c0 + j) * Hv + h) * dv + c]) : 0.0f;
    }
  }
  __syncthreads();

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

__global__ void __launch_bounds__(kThreads, 1)
    chunk_pass_kernel(const float* q, const float* k, SeqTable seqs, int min_len, ChunkWork ws, uint16_t* o, int Hk,
                      int dk, int Hv, int dv, bool rows16) {
  extern __shared__ __align__(16) float sm[];
  float* Ss = sm;                        // [128][36] the state's columns col0 .. col0 + 31
  float* WQ = Ss + kMaxDim * kPitchS;    // [128][132] W rows, then query rows
  float* Ks = WQ + 2 * kC * kPitch;      // [64][132]
  float* Ms = Ks + kC * kPitch;          // [64][68]
  float* Us = Ms + kC * kPitchC;         // [64][36]
  float* Vp = Us + kC * kPitchS;         // [64][36] V'
  float* Vpp = Vp + kC * kPitchS;        // [64][36] V'' = E_{last,j} V'
  float* eLs = Vpp + kC * kPitchS;       // [64]
  float* eGs = eLs + kC;                 // [64]
  const int s = blockIdx.z, h = blockIdx.y, hk = h / (Hv / Hk), col0 = blockIdx.x * kSlice, tid = threadIdx.x;
  const int start = seqs.offsets[s], len = seqs.offsets[s + 1] - start;
  if (len < min_len || len == 0) return;
  const int chunks = (len + kC - 1) / kC;

  // Zero everything once: padding columns stay zero, and no sum ever meets uninitialised bits.
  for (int i = tid; i < int(kPassSmem / sizeof(float)); i += kThreads) sm[i] = 0.0f;
  __syncthreads();

  // A row of `width` floats into shared memory: 16-byte copies where the rows allow them.
  auto stage_rows = [&](float* dst, int pitch, const float* src, int64_t stride, int n, int width, bool by16) {
    const int per = by16 ? width / 4 : width;
    for (int p = tid; p < n * per; p += kThreads) {
      const int i = p / per, x = p % per;
      if (by16) cp_async_16(dst + i * pitch + 4 * x, src + i * stride + 4 * x);
      else cp_async_4(dst + i * pitch + x, src + i * stride + x);
    }
  };
  // Group A: what V' and P need (W, queries, U's slice, E_{last,j}); group B: keys, M, exp(G).
  auto stage_a = [&](int c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    stage_rows(WQ, kPitch, ws.W + (int64_t(c0) * Hv + h) * kMaxDim, int64_t(Hv) * kMaxDim, n, kMaxDim, true);
    stage_rows(WQ + kC * kPitch, kPitch, q + (int64_t(c0) * Hk + hk) * dk, int64_t(Hk) * dk, n, dk, rows16);
    stage_rows(Us, kPitchS, ws.U + (int64_t(c0) * Hv + h) * kMaxDim + col0, int64_t(Hv) * kMaxDim, n, kSlice, true);
    stage_rows(eLs, 1, ws.eL + int64_t(c0) * Hv + h, Hv, n, 1, false);
    cp_async_commit();
  };
  auto stage_b = [&](int c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    stage_rows(Ks, kPitch, k + (int64_t(c0) * Hk + hk) * dk, int64_t(Hk) * dk, n, dk, rows16);
    stage_rows(Ms, kPitchC, ws.M + (int64_t(c0) * Hv + h) * kC, int64_t(Hv) * kC, n, kC, true);
    stage_rows(eGs, 1, ws.eG + int64_t(c0) * Hv + h, Hv, n, 1, false);
    cp_async_commit();
  };

  const int rg = tid / 8, cg = tid % 8;  // phase 1 rows rg + 32m; phase 2 O rows rg, rg + 32 and state rows 4rg..
  const int dk4 = (dk + 3) & ~3;
  stage_a(0);
  stage_b(0);
  for (int c = 0; c < chunks; ++c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    cp_async_wait<1>();  // group A of this chunk
    __syncthreads();

    // Phase 1: [W; Q] S over the key dim in order; V' = U - W S (zero past n), P = Q S kept.
    float acc[4][4] = {};
    for (int r = 0; r < dk4; r += 4) {
      float4 sv[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) sv[x] = ld4(Ss + (r + x) * kPitchS + 4 * cg);
#pragma unroll
      for (int m = 0; m < 4; ++m) fma4x4(acc[m], ld4(WQ + (rg + 32 * m) * kPitch + r), sv);
    }
#pragma unroll
    for (int m = 0; m < 2; ++m) {
      const int i = rg + 32 * m;
      float vp[4], vpp[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        vp[x] = i < n ? __fsub_rn(Us[i * kPitchS + 4 * cg + x], acc[m][x]) : 0.0f;
        vpp[x] = i < n ? __fmul_rn(eLs[i], vp[x]) : 0.0f;
      }
      *reinterpret_cast<float4*>(Vp + i * kPitchS + 4 * cg) = make_float4(vp[0], vp[1], vp[2], vp[3]);
      *reinterpret_cast<float4*>(Vpp + i * kPitchS + 4 * cg) = make_float4(vpp[0], vpp[1], vpp[2], vpp[3]);
    }
    __syncthreads();
    if (c + 1 < chunks) stage_a(c + 1);
    else cp_async_commit();  // an empty group keeps the waits' counting uniform
    cp_async_wait<1>();      // group B of this chunk
    __syncthreads();

    // Phase 2a: O = bf16(exp(G_i) P + M V'), j in order (M is zero past the diagonal).
    const int i0 = rg, i1 = rg + 32;
    float o0[4], o1[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      o0[x] = __fmul_rn(eGs[i0], acc[2][x]);
      o1[x] = __fmul_rn(eGs[i1], acc[3][x]);
    }
    for (int jb = 0; jb <= i1 / 4; ++jb) {
      float4 vv[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) vv[x] = ld4(Vp + (4 * jb + x) * kPitchS + 4 * cg);
      if (jb <= i0 / 4) fma4x4(o0, ld4(Ms + i0 * kPitchC + 4 * jb), vv);
      fma4x4(o1, ld4(Ms + i1 * kPitchC + 4 * jb), vv);
    }
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int col = col0 + 4 * cg + x;
      if (col >= dv) continue;
      if (i0 < n) o[(int64_t(c0 + i0) * Hv + h) * dv + col] = st_bf16(o0[x]);
      if (i1 < n) o[(int64_t(c0 + i1) * Hv + h) * dv + col] = st_bf16(o1[x]);
    }

    // Phase 2b: S = exp(G_last) S + K^T V'', j in order; each thread owns its 4 x 4 of S.
    if (4 * rg < dk) {
      const float last = eGs[n - 1];
      float st[4][4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int x = 0; x < 4; ++x) st[a][x] = __fmul_rn(last, Ss[(4 * rg + a) * kPitchS + 4 * cg + x]);
      for (int j = 0; j < n; ++j) {
        const float4 kj = ld4(Ks + j * kPitch + 4 * rg), vj = ld4(Vpp + j * kPitchS + 4 * cg);
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const float ka = at(kj, a);
          st[a][0] = __fmaf_rn(ka, vj.x, st[a][0]);
          st[a][1] = __fmaf_rn(ka, vj.y, st[a][1]);
          st[a][2] = __fmaf_rn(ka, vj.z, st[a][2]);
          st[a][3] = __fmaf_rn(ka, vj.w, st[a][3]);
        }
      }
#pragma unroll
      for (int a = 0; a < 4; ++a)
        *reinterpret_cast<float4*>(Ss + (4 * rg + a) * kPitchS + 4 * cg) = make_float4(st[a][0], st[a][1], st[a][2], st[a][3]);
    }
    __syncthreads();
    if (c + 1 < chunks) stage_b(c + 1);
    else cp_async_commit();
  }
  cp_async_wait<0>();
}

}  // namespace

void launch_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                               const SeqTable& seqs, int min_len, Tensor& o) {
  const int T = int(q.dim(0)), Hk = int(q.dim(1)), dk = int(q.dim(2)), Hv = int(v.dim(1)), dv = int(v.dim(2));
  if (dk > kMaxDim || dv > kMaxDim)
    fail("gated_delta_rule_chunked: the CUDA kernels hold key and value head dims up to " + std::to_string(kMaxDim) +
         ", got dk " + std::to_string(dk) + ", dv " + std::to_string(dv));
  int most_chunks = 0;
  for (int s = 0; s < seqs.count; ++s) {
    const int len = seqs.offsets[s + 1] - seqs.offsets[s];
    if (len >= min_len) most_chunks = std::max(most_chunks, (len + kC - 1) / kC);
  }
  if (most_chunks == 0 || Hv == 0 || dv == 0) return;
  Tensor W = empty(DType::F32, {T, Hv, kMaxDim}, Device::CUDA), U = empty(DType::F32, {T, Hv, kMaxDim}, Device::CUDA);
  Tensor M = empty(DType::F32, {T, Hv, kC}, Device::CUDA), eG = empty(DType::F32, {T, Hv}, Device::CUDA),
         eL = empty(DType::F32, {T, Hv}, Device::CUDA);
  ChunkWork ws{W.ptr<float>(), U.ptr<float>(), M.ptr<float>(), eG.ptr<float>(), eL.ptr<float>()};

  TF_CUDA(cudaFuncSetAttribute(chunk_prep_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPrepSmem)));
  dim3 prep_grid(unsigned(most_chunks), unsigned(Hv), unsigned(seqs.count));
  chunk_prep_kernel<<<prep_grid, kThreads, kPrepSmem, stream()>>>(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(),
                                                                  beta.ptr<float>(), g.ptr<float>(), seqs, min_len, ws,
                                                                  Hk, dk, Hv, dv);
  TF_CUDA_LAUNCH("chunk_prep_kernel");

  const bool rows16 = dk % 4 == 0 && (reinterpret_cast<uintptr_t>(q.data) & 15) == 0 &&
                      (reinterpret_cast<uintptr_t>(k.data) & 15) == 0;
  TF_CUDA(cudaFuncSetAttribute(chunk_pass_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPassSmem)));
  dim3 pass_grid(unsigned((dv + kSlice - 1) / kSlice), unsigned(Hv), unsigned(seqs.count));
  chunk_pass_kernel<<<pass_grid, kThreads, kPassSmem, stream()>>>(q.ptr<float>(), k.ptr<float>(), seqs, min_len, ws,
                                                                  static_cast<uint16_t*>(o.data), Hk, dk, Hv, dv, rows16);
  TF_CUDA_LAUNCH("chunk_pass_kernel");
}

void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o) {
  if (q.dim(0) == 0) return;
  launch_delta_rule_chunked(q, k, v, beta, g, make_seq_table("gated_delta_rule_chunked", seq_offsets), 0, o);
}

}  // namespace tf::cuda
