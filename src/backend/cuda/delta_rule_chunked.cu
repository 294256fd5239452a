// The gated delta rule in the chunked (WY) form on CUDA, fp32 FFMA throughout (the order of
// backend/cpu/delta_rule_chunked.cpp): the prep (delta_rule_chunk_prep.cu), then
//   chunk_pass_kernel, one block per (32 state columns, value head, sequence), chunks in order:
//     V' = U - W S, O = exp(G) Q S + M V', S = exp(G_last) S + K^T V'', the state slice in shared memory.
#include <algorithm>
#include <string>

#include "backend/cuda/check.h"
#include "backend/cuda/delta_rule_chunked.cuh"
#include "backend/cuda/delta_rule_chunked.h"
#include "backend/cuda/transformer_ops.h"

namespace tf::cuda {

using namespace chunked;

namespace {

constexpr size_t kPassSmem =
    sizeof(float) * (kMaxDim * kPitchS + 2 * kC * kPitch + kC * kPitch + kC * kPitchC + 3 * kC * kPitchS + 2 * kC);

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

  // Group A: what V' and P need (W, queries, U's slice, E_{last,j}); group B: keys, M, exp(G).
  auto stage_a = [&](int c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    stage_rows(WQ, kPitch, ws.W + (int64_t(c0) * Hv + h) * kMaxDim, int64_t(Hv) * kMaxDim, n, kMaxDim, true, tid);
    stage_rows(WQ + kC * kPitch, kPitch, q + (int64_t(c0) * Hk + hk) * dk, int64_t(Hk) * dk, n, dk, rows16, tid);
    stage_rows(Us, kPitchS, ws.U + (int64_t(c0) * Hv + h) * kMaxDim + col0, int64_t(Hv) * kMaxDim, n, kSlice, true, tid);
    stage_rows(eLs, 1, ws.eL + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
    cp_async_commit();
  };
  auto stage_b = [&](int c) {
    const int c0 = start + c * kC, n = min(kC, len - c * kC);
    stage_rows(Ks, kPitch, k + (int64_t(c0) * Hk + hk) * dk, int64_t(Hk) * dk, n, dk, rows16, tid);
    stage_rows(Ms, kPitchC, ws.M + (int64_t(c0) * Hv + h) * kC, int64_t(Hv) * kC, n, kC, true, tid);
    stage_rows(eGs, 1, ws.eG + int64_t(c0) * Hv + h, Hv, n, 1, false, tid);
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
#pragma unroll 2
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
#pragma unroll 2
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
#pragma unroll 4
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
