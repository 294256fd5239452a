// The gated delta rule in the chunked (WY) form on CUDA: the prep (delta_rule_chunk_prep.cu), then
//   chunk_pass_kernel, one block per (32 state columns, value head, sequence), chunks in order:
//     V' = U - W S, O = exp(G) Q S + M V', S = exp(G_last) S + K^T V'', the state slice in shared memory,
//   its three products on the tensor cores as 3xTF32 (mma_3xtf32.cuh), within the contract of the
//   fp32 recurrence; the sums' order is the MMAs' (8 terms a step), not the CPU chunked form's.
#include <algorithm>
#include <string>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/delta_rule/delta_rule_chunked.cuh"
#include "backend/cuda/kernels/delta_rule/delta_rule_chunked.h"
#include "backend/cuda/primitives/mma_3xtf32.cuh"
#include "backend/delta_rule/gated_delta_rule.h"

namespace tf::cuda {

using namespace chunked;

namespace {

constexpr size_t kPassSmem =
    sizeof(float) * (2 * kMaxDim * kPitchN + 2 * kC * kPitch + kC * kPitchK + kC * kPitchC + 5 * kC * kPitchN + 2 * kC);
static_assert(kThreads / 32 * 16 == kMaxDim && kSlice == 32 && kC == 64, "the pass's warp tiling");

// Element e of a lane's 16 x 8 accumulator tile: row g (e < 2) or g + 8, column 2t + e % 2.
__device__ __forceinline__ int acc_row(int e, tf32x3::Lane l) { return l.g + 8 * (e / 2); }
__device__ __forceinline__ int acc_col(int e, tf32x3::Lane l) { return 2 * l.t + e % 2; }

__global__ void __launch_bounds__(kThreads, 1)
    chunk_pass_kernel(const float* q, const float* k, SeqTable seqs, int min_len, ChunkWork ws, uint16_t* o, int Hk,
                      int dk, int Hv, int dv, bool rows16) {
  extern __shared__ __align__(16) float sm[];
  uint32_t* Sh = reinterpret_cast<uint32_t*>(sm);  // [128][40] the state's columns col0 .. col0 + 31, split
  uint32_t* Sl = Sh + kMaxDim * kPitchN;
  float* WQ = sm + 2 * kMaxDim * kPitchN;  // [128][132] W rows, then query rows
  float* Ks = WQ + 2 * kC * kPitch;        // [64][136]
  float* Ms = Ks + kC * kPitchK;           // [64][68]
  float* Us = Ms + kC * kPitchC;           // [64][40]
  uint32_t* Vph = reinterpret_cast<uint32_t*>(Us + kC * kPitchN);  // [64][40] V', split
  uint32_t* Vpl = Vph + kC * kPitchN;
  uint32_t* Vpph = Vpl + kC * kPitchN;  // [64][40] V'' = E_{last,j} V', split
  uint32_t* Vppl = Vpph + kC * kPitchN;
  float* eLs = reinterpret_cast<float*>(Vppl + kC * kPitchN);  // [64]
  float* eGs = eLs + kC;                                       // [64]
  const int s = blockIdx.z, h = blockIdx.y, hk = h / (Hv / Hk), col0 = blockIdx.x * kSlice, tid = threadIdx.x;
  const int start = seqs.offsets[s], len = seqs.offsets[s + 1] - start;
  if (len < min_len || len == 0) return;
  const int chunks = (len + kC - 1) / kC;

  // Zero everything once: padding rows and columns stay zero, and no sum ever meets uninitialised bits.
  for (int i = tid; i < int(kPassSmem / sizeof(float)); i += kThreads) sm[i] = 0.0f;
  __syncthreads();

  // Group A: what V' and P need (W, queries, U's slice, E_{last,j}); group B: keys, M, exp(G).
  auto stage_a = [&](int c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    stage_rows16<kMaxDim>(WQ, kPitch, ws.W + (int64_t(c0) * Hv + h) * kMaxDim, int64_t(Hv) * kMaxDim, n, kMaxDim, tid);
    const float* qc = q + (int64_t(c0) * Hk + hk) * dk;
    if (rows16) stage_rows16<kMaxDim>(WQ + kC * kPitch, kPitch, qc, int64_t(Hk) * dk, n, dk, tid);
    else stage_rows(WQ + kC * kPitch, kPitch, qc, int64_t(Hk) * dk, n, dk, false, tid);
    const float* uc = ws.U + (int64_t(c0) * Hv + h) * kMaxDim + col0;
    stage_rows16<kSlice>(Us, kPitchN, uc, int64_t(Hv) * kMaxDim, n, kSlice, tid);
    stage_rows(eLs, 1, ws.eL + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
    cp_async_commit();
  };
  auto stage_b = [&](int c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    const float* kc = k + (int64_t(c0) * Hk + hk) * dk;
    if (rows16) stage_rows16<kMaxDim>(Ks, kPitchK, kc, int64_t(Hk) * dk, n, dk, tid);
    else stage_rows(Ks, kPitchK, kc, int64_t(Hk) * dk, n, dk, false, tid);
    stage_rows16<kC>(Ms, kPitchC, ws.M + (int64_t(c0) * Hv + h) * kC, int64_t(Hv) * kC, n, kC, tid);
    stage_rows(eGs, 1, ws.eG + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
    cp_async_commit();
  };

  // Warp w: row tile w of [W; Q] and, for w >= 4, row tile w - 4 of O, over all 32 columns; state
  // rows 16 w .. + 15, held in registers across chunks (st), their split copy in Sh / Sl.
  const int warp = tid / 32;
  const tf32x3::Lane lane(tid % 32);
  const int dk8 = (dk + 7) & ~7;
  float st[4][4] = {};
  stage_a(0);
  stage_b(0);
  for (int c = 0; c < chunks; ++c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    cp_async_wait<1>();  // group A of this chunk
    __syncthreads();

    // Phase 1: [W; Q] S over the key dim; V' = U - W S (zero past n), P = Q S kept in registers.
    float acc[4][4] = {};
#pragma unroll 4
    for (int r = 0; r < dk8; r += 8) {
      const tf32x3::FragA a = tf32x3::load_a(WQ, kPitch, 16 * warp, r, lane);
#pragma unroll
      for (int x = 0; x < 4; ++x) tf32x3::mma(acc[x], a, tf32x3::load_b(Sh, Sl, kPitchN, r, 8 * x, lane));
    }
    if (warp < 4) {
#pragma unroll
      for (int x = 0; x < 4; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = 16 * warp + acc_row(e, lane), at = i * kPitchN + 8 * x + acc_col(e, lane);
          const float vp = i < n ? __fsub_rn(Us[at], acc[x][e]) : 0.0f, vpp = i < n ? __fmul_rn(eLs[i], vp) : 0.0f;
          const uint2 a = tf32x3::split(vp), b = tf32x3::split(vpp);
          Vph[at] = a.x, Vpl[at] = a.y, Vpph[at] = b.x, Vppl[at] = b.y;
        }
    }
    __syncthreads();
    if (c + 1 < chunks) stage_a(c + 1);
    else cp_async_commit();  // an empty group keeps the waits' counting uniform
    cp_async_wait<1>();      // group B of this chunk
    __syncthreads();

    // Phase 2a (warps 4-7): O = bf16(exp(G_i) P + M V'), j up to the row tile's diagonal (M is zero past it).
    if (warp >= 4) {
      const int m0 = 16 * (warp - 4);
#pragma unroll
      for (int x = 0; x < 4; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[x][e] = __fmul_rn(eGs[m0 + acc_row(e, lane)], acc[x][e]);
      for (int j = 0; j < m0 + 16; j += 8) {
        const tf32x3::FragA a = tf32x3::load_a(Ms, kPitchC, m0, j, lane);
#pragma unroll
        for (int x = 0; x < 4; ++x) tf32x3::mma(acc[x], a, tf32x3::load_b(Vph, Vpl, kPitchN, j, 8 * x, lane));
      }
#pragma unroll
      for (int x = 0; x < 4; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = m0 + acc_row(e, lane), col = col0 + 8 * x + acc_col(e, lane);
          if (i < n && col < dv) o[(int64_t(c0 + i) * Hv + h) * dv + col] = st_bf16(acc[x][e]);
        }
    }

    // Phase 2b: S = exp(G_last) S + K^T V'' over j < n (V'' is zero past n), this warp's 16 state rows.
    if (16 * warp < dk) {
      const float last = eGs[n - 1];
#pragma unroll
      for (int x = 0; x < 4; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e) st[x][e] = __fmul_rn(last, st[x][e]);
      const int n8 = (n + 7) & ~7;
#pragma unroll 2
      for (int j = 0; j < n8; j += 8) {
        const tf32x3::FragA a = tf32x3::load_a_transposed(Ks, kPitchK, 16 * warp, j, lane);
#pragma unroll
        for (int x = 0; x < 4; ++x) tf32x3::mma(st[x], a, tf32x3::load_b(Vpph, Vppl, kPitchN, j, 8 * x, lane));
      }
#pragma unroll
      for (int x = 0; x < 4; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int at = (16 * warp + acc_row(e, lane)) * kPitchN + 8 * x + acc_col(e, lane);
          const uint2 p = tf32x3::split(st[x][e]);
          Sh[at] = p.x, Sl[at] = p.y;
        }
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
  const bool rows16 = dk % 4 == 0 && (reinterpret_cast<uintptr_t>(q.data) & 15) == 0 &&
                      (reinterpret_cast<uintptr_t>(k.data) & 15) == 0;
  const bool v16 = dv % 4 == 0 && (reinterpret_cast<uintptr_t>(v.data) & 15) == 0;
  launch_chunk_prep(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(), g.ptr<float>(), seqs, min_len, ws,
                    most_chunks, Hk, dk, Hv, dv, rows16, v16);

  static const bool pass_smem = [] {  // the dynamic shared-memory limit raised once, not every launch
    TF_CUDA(cudaFuncSetAttribute(chunk_pass_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPassSmem)));
    return true;
  }();
  (void)pass_smem;
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
