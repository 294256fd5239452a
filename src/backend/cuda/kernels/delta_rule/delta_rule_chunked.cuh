#pragma once
// What the chunked gated delta rule's two kernels share: the tile geometry, the prep's workspace,
// and the small fp32 helpers (delta_rule_chunk_prep.cu, delta_rule_chunked.cu).
#include <cstdint>

#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"
#include "backend/delta_rule/gated_delta_rule.h"

namespace tf::cuda::chunked {

constexpr int kC = static_cast<int>(kDeltaRuleChunk);
constexpr int kMaxDim = 128;  // dk and dv the kernels hold
constexpr int kPitch = 132;   // [64][128] tiles: float4 rows of a warp land in distinct banks
constexpr int kPitchC = 68;   // [64][65] tiles (decays, L, A, M)
constexpr int kSlice = 32;    // state columns per pass block
constexpr int kPitchN = 40;   // [*][32] tiles read as B operands: rows t and t + 4 of a fragment in distinct banks
constexpr int kPitchK = 136;  // [64][128] keys read transposed as the A operand, likewise
constexpr int kThreads = 256;

// The prep kernel's outputs, token-major like the inputs: W, U [T, Hv, 128] (zero past dk, dv),
// M [T, Hv, 64] (row i of its chunk, zero past the diagonal), eG = exp(G_i), eL = E_{last,i} [T, Hv].
struct ChunkWork {
  float* W;
  float* U;
  float* M;
  float* eG;
  float* eL;
};

__device__ __forceinline__ float4 ld4(const float* p) { return *reinterpret_cast<const float4*>(p); }

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

// `n` rows of `width` floats into shared memory: 16-byte copies where the rows allow them.
__device__ __forceinline__ void stage_rows(float* dst, int pitch, const float* src, int64_t stride, int n, int width,
                                           bool by16, int tid) {
  const int per = by16 ? width / 4 : width;
  for (int p = tid; p < n * per; p += kThreads) {
    const int i = p / per, x = p % per;
    if (by16) cp_async_16(dst + i * pitch + 4 * x, src + i * stride + 4 * x);
    else cp_async_4(dst + i * pitch + x, src + i * stride + x);
  }
}

// The same for 16-byte rows of kWidth floats, of which the first `width` are copied: each thread keeps
// one 16-byte column and steps by whole rows, so a copy costs a pointer add.
template <int kWidth>
__device__ __forceinline__ void stage_rows16(float* dst, int pitch, const float* src, int64_t stride, int n, int width,
                                             int tid) {
  static_assert(kWidth % 4 == 0 && kThreads % (kWidth / 4) == 0, "whole rows a pass");
  constexpr int kPer = kWidth / 4, kRowsAPass = kThreads / kPer;
  const int r0 = tid / kPer, x = 4 * (tid % kPer);
  if (x >= width) return;
  const float* s = src + r0 * stride + x;
  float* d = dst + r0 * pitch + x;
#pragma unroll 4
  for (int i = r0; i < n; i += kRowsAPass, s += kRowsAPass * stride, d += kRowsAPass * pitch) cp_async_16(d, s);
}

// The prep: decays, L, M, A = (I + L)^-1, W = A X and U = A Y for every chunk of the sequences of at
// least min_len tokens, on the current stream.
void launch_chunk_prep(const float* q, const float* k, const float* v, const float* beta, const float* g,
                       const SeqTable& seqs, int min_len, const ChunkWork& ws, int most_chunks, int Hk, int dk, int Hv,
                       int dv, bool rows16, bool v16);

}  // namespace tf::cuda::chunked
