// The chunked gated delta rule's prep kernel, one block per (chunk, value head, sequence), all
// chunks at once: the decays, L and M from the chunk's Gram products, A = (I + L)^-1 in 16-row
// blocks, then W = A X and U = A Y. The Gram and W / U products run on the tensor cores as 3xTF32
// (mma_3xtf32.cuh); the decays and the inverse are fp32 in the order of backend/cpu/delta_rule_chunked.cpp.
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/delta_rule/delta_rule_chunked.cuh"
#include "backend/cuda/primitives/mma_3xtf32.cuh"

namespace tf::cuda::chunked {

namespace {

constexpr int kBlk = 16;     // the inverse's block rows
constexpr int kPitchT = 52;  // [16][48] block-row products
constexpr int kDecay0 = 128;  // the decay threads (warps 4 and 5), which hold no Gram tile
static_assert(kThreads == 256 && kC == 64, "the prep's warp roles");
static_assert(kC % kBlk == 0 && kC / kBlk * kBlk <= kThreads, "the diagonal blocks' columns are one thread each");

constexpr size_t kPrepSmem = sizeof(float) * (2 * kC * kPitch + 2 * kC * kPitchC + kBlk * kPitchT + 3 * kC);

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
  // unrolled: each block row's width is a constant, so the index arithmetic has no divisions
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

  // Gram products K K^T and Q K^T on the tensor cores: warp w holds row tile w % 4 over columns
  // 32 (w / 4) .. + 31, the 8-wide tiles on or left of the diagonal (warps 4 and 5 hold none).
  // Meanwhile the decays (warps 4 and 5): thread `col` runs its own sum from token col on, so E near
  // the diagonal carries only the rounding of the few terms it spans.
  const int warp = tid / 32, mt = warp % 4, n0 = 32 * (warp / 4);
  const tf32x3::Lane lane(tid % 32);
  const int dk8 = (dk + 7) & ~7;
  float kk[4][4] = {}, qk[4][4] = {};
  auto live = [&](int x) { return n0 + 8 * x <= 16 * mt + 15; };
  if (live(0)) {
#pragma unroll 2
    for (int c = 0; c < dk8; c += 8) {
      const tf32x3::FragA ak = tf32x3::load_a(Ks, kPitch, 16 * mt, c, lane);
      const tf32x3::FragA aq = tf32x3::load_a(Qs, kPitch, 16 * mt, c, lane);
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        if (!live(x)) continue;
        const tf32x3::FragB b = tf32x3::load_b_transposed(Ks, kPitch, c, n0 + 8 * x, lane);
        tf32x3::mma(kk[x], ak, b);
        tf32x3::mma(qk[x], aq, b);
      }
    }
  } else if (tid >= kDecay0 && tid < kDecay0 + kC) {
    const int col = tid - kDecay0;
    if (col >= 1) E[(col - 1) * kPitchC + col] = 1.0f;
    if (col == 0) E[(kC - 1) * kPitchC + kC] = 1.0f;
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
  // L = beta_i (k_i . k_j) E_ij (j < i) and M = (q_i . k_j) E_ij (j <= i), rows past n left zero.
#pragma unroll
  for (int x = 0; x < 4; ++x) {
    if (!live(x)) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int i = 16 * mt + lane.g + 8 * half, j = n0 + 8 * x + 2 * lane.t;
      float m[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float ee = i < n ? E[i * kPitchC + j + e + 1] : 0.0f;
        L[i * kPitchC + j + e] = j + e < i ? __fmul_rn(__fmul_rn(bs[i], kk[x][2 * half + e]), ee) : 0.0f;
        m[e] = j + e <= i ? __fmul_rn(qk[x][2 * half + e], ee) : 0.0f;
      }
      if (i < n) *reinterpret_cast<float2*>(ws.M + (int64_t(c0 + i) * Hv + h) * kC + j) = make_float2(m[0], m[1]);
    }
  }
  for (int idx = tid; idx < kC * kC / 4; idx += kThreads) {  // M right of the row tile's last Gram column
    const int i = idx / (kC / 4), jq = idx % (kC / 4);
    if (i < n && 4 * jq > (i / 16) * 16 + 15)
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

  // [W | U] = A [X | Y] on the tensor cores: warp w holds columns 16 w .. + 15 of X, then of Y, over
  // the four row tiles; row tile m needs j < 16 m + 16 only (A is zero right of its diagonal block).
#pragma unroll 1
  for (int part = 0; part < 2; ++part) {
    const float* B = part == 0 ? Ks : Qs;
    float* dst = part == 0 ? ws.W : ws.U;
#pragma unroll 1
    for (int m = 0; m < kC / 16; ++m) {
      float acc[2][4] = {};
      for (int j = 0; j < 16 * m + 16; j += 8) {
        const tf32x3::FragA a = tf32x3::load_a(A, kPitchC, 16 * m, j, lane);
#pragma unroll
        for (int x = 0; x < 2; ++x) tf32x3::mma(acc[x], a, tf32x3::load_b(B, kPitch, j, 16 * warp + 8 * x, lane));
      }
#pragma unroll
      for (int x = 0; x < 2; ++x)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int i = 16 * m + lane.g + 8 * half;
          if (i < n)
            *reinterpret_cast<float2*>(dst + (int64_t(c0 + i) * Hv + h) * kMaxDim + 16 * warp + 8 * x + 2 * lane.t) =
                make_float2(acc[x][2 * half], acc[x][2 * half + 1]);
        }
    }
  }
}

}  // namespace

void launch_chunk_prep(const float* q, const float* k, const float* v, const float* beta, const float* g,
                       const SeqTable& seqs, int min_len, const ChunkWork& ws, int most_chunks, int Hk, int dk, int Hv,
                       int dv, bool rows16, bool v16) {
  static const bool prep_smem = [] {  // the dynamic shared-memory limit raised once, not every launch
    TF_CUDA(cudaFuncSetAttribute(chunk_prep_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPrepSmem)));
    return true;
  }();
  (void)prep_smem;
  dim3 grid(unsigned(most_chunks), unsigned(Hv), unsigned(seqs.count));
  chunk_prep_kernel<<<grid, kThreads, kPrepSmem, stream()>>>(q, k, v, beta, g, seqs, min_len, ws, Hk, dk, Hv, dv, rows16,
                                                             v16);
  TF_CUDA_LAUNCH("chunk_prep_kernel");
}

}  // namespace tf::cuda::chunked
