// Gated DeltaNet on CUDA: causal depthwise conv + SiLU, the input prep (q/k L2 norm in fp32, beta,
// decay) and the recurrent gated delta rule with the fp32 state held in registers; long
// sequences take the chunked form (delta_rule_chunked.cu).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>

#include "backend/cuda/check.h"
#include "backend/cuda/delta_rule_chunked.h"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/tensor_core.cuh"
#include "backend/cuda/transformer_ops.h"
#include "backend/gated_delta_rule.h"
#include "core/env_switch.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

// y[t, c] = bf16(silu(bf16(sum_j w[c, j] x[t - K + 1 + j, c]))), zeros before the sequence start.
// V channels per thread; with kK > 0 the thread's V x kK weights are read at once (16-byte pieces
// when V = 8), with kK = 0 one weight at a time for any K. grid: (tokens, channel blocks), so no
// thread divides by C.
template <int V, int kK>
__global__ void causal_conv1d_silu_kernel(const uint16_t* x, const uint16_t* w, SeqTable seqs, uint16_t* y,
                                          int64_t C, int K) {
  const int64_t c = (blockIdx.y * int64_t(blockDim.x) + threadIdx.x) * V;
  if (c >= C) return;
  const int64_t t = blockIdx.x, i = t * C + c;
  const int64_t start = seqs.offsets[seq_of(seqs, static_cast<int>(t))];
  float acc[V], xs[V];
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = 0.0f;
  if constexpr (kK > 0) {
    float wv[V * kK];  // [channel][tap]
    if constexpr (V * kK % 8 == 0) {
#pragma unroll
      for (int p = 0; p < V * kK / 8; ++p) {
        float part[8];
        ld_bf16x<8>(w + c * kK + 8 * p, part);
#pragma unroll
        for (int e = 0; e < 8; ++e) wv[8 * p + e] = part[e];
      }
    } else {
#pragma unroll
      for (int e = 0; e < V * kK; ++e) wv[e] = ld_bf16(w, c * kK + e);
    }
#pragma unroll
    for (int j = 0; j < kK; ++j) {
      const int64_t src = t - (kK - 1) + j;
      if (src < start) continue;
      ld_bf16x<V>(x + src * C + c, xs);
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = acc[e] + wv[e * kK + j] * xs[e];
    }
  } else {
    for (int j = 0; j < K; ++j) {
      const int64_t src = t - (K - 1) + j;
      if (src < start) continue;
      ld_bf16x<V>(x + src * C + c, xs);
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = acc[e] + ld_bf16(w, (c + e) * K + j) * xs[e];
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = silu32(round_bf16(acc[e]));
  st_bf16x<V>(y + i, acc);
}

// gridDim.y blocks per token share its work: their warps L2-normalise the q and k heads (fp32), their
// threads copy v to fp32 and make beta and the decay g. Short prompts have few tokens, so a token's
// work is spread over several blocks. Outputs never alias inputs (restrict), and a lane's values are
// loaded before its first store, so no load waits behind a store.
__global__ void delta_net_prep_kernel(const uint16_t* __restrict__ mixed, const uint16_t* __restrict__ b,
                                      const uint16_t* __restrict__ a, const void* __restrict__ A_log, bool A_f32,
                                      const void* __restrict__ dt_bias, bool dt_f32, float* __restrict__ q,
                                      float* __restrict__ k, float* __restrict__ v, float* __restrict__ beta,
                                      float* __restrict__ g, int Hk, int dk, int Hv, int dv, float q_scale) {
  const int64_t t = blockIdx.x;
  const int width = 2 * Hk * dk + Hv * dv, key_dim = Hk * dk;
  const uint16_t* row = mixed + t * width;
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32 * gridDim.y;
  const int warp = blockIdx.y * (blockDim.x / 32) + threadIdx.x / 32;       // among the token's blocks
  const int thread = blockIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * gridDim.y;
  for (int hr = warp; hr < 2 * Hk; hr += warps) {
    const bool is_k = hr >= Hk;
    const int head = is_k ? hr - Hk : hr;
    const uint16_t* src = row + (is_k ? key_dim : 0) + head * dk;
    float* dst = (is_k ? k : q) + (t * Hk + head) * dk;
    float ss = 0.0f;
    for (int i = lane; i < dk; i += 32) {
      float x = ld_bf16(src, i);
      ss = ss + x * x;
    }
    ss = group_sum<32>(ss);
    const float inv = 1.0f / sqrtf(ss + 1e-6f);
    for (int i = lane; i < dk; i += 32) {
      float n = ld_bf16(src, i) * inv;
      dst[i] = is_k ? n : n * q_scale;
    }
  }
  const uint16_t* vsrc = row + 2 * key_dim;
  float* vdst = v + t * Hv * dv;
  const int n_v = Hv * dv;
  if (n_v % 8 == 0 && (reinterpret_cast<uintptr_t>(vsrc) & 15) == 0) {
    for (int i = thread * 8; i < n_v; i += threads * 8) {
      float x[8];
      ld_bf16x<8>(vsrc + i, x);
#pragma unroll
      for (int e = 0; e < 8; ++e) vdst[i + e] = x[e];
    }
  } else {
    for (int i = thread; i < n_v; i += threads) vdst[i] = ld_bf16(vsrc, i);
  }
  for (int h = thread; h < Hv; h += threads) {
    beta[t * Hv + h] = round_bf16(sigmoid32(ld_bf16(b, t * Hv + h)));  // b.sigmoid() on bf16
    float x = ld_bf16(a, t * Hv + h) + ld_weight(dt_bias, dt_f32, h);
    float softplus = x > 20.0f ? x : log1pf(expf(x));
    g[t * Hv + h] = -expf(ld_weight(A_log, A_f32, h)) * softplus;
  }
}

// Sums over the 8 row groups of a warp (lane bits 2..4): the same bits in every lane of a column.
// N sums at once, their shuffles interleaved, so each extra sum costs no extra latency.
template <int N>
__device__ __forceinline__ void row_group_sums(float (&x)[N]) {
#pragma unroll
  for (int m = 4; m <= 16; m *= 2) {
    float other[N];
#pragma unroll
    for (int e = 0; e < N; ++e) other[e] = __shfl_xor_sync(0xffffffffu, x[e], m);
#pragma unroll
    for (int e = 0; e < N; ++e) x[e] = x[e] + other[e];
  }
}

// A dot product of R register rows in four independent chains (the contract's sum model holds
// for any order), so its latency is R/4 dependent fmas, not R.
template <int R>
__device__ __forceinline__ float dot_rows(const float (&x)[R], const float (&y)[R]) {
  constexpr int L = R < 4 ? R : 4;
  float acc[L];
#pragma unroll
  for (int l = 0; l < L; ++l) acc[l] = x[l] * y[l];
#pragma unroll
  for (int r = L; r < R; ++r) acc[r % L] = __fmaf_rn(x[r], y[r], acc[r % L]);
  if constexpr (L == 4) return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  else if constexpr (L == 2) return acc[0] + acc[1];
  else return acc[0];
}

// Tokens per staging buffer; three buffers rotate (cp.async), up to two chunks ahead of the one in use.
constexpr int kChunk = 8;
constexpr int kBuffers = 3;
// State columns per warp: 4 column pairs (lane % 4) x 8 row groups (lane / 4).
constexpr int kCols = 8;

// A staging buffer's floats: k and q rows [kChunk][2][dk], v [kChunk][kCols], g [kChunk], beta [kChunk].
__host__ __device__ constexpr int staged_floats(int dk) { return kChunk * (2 * dk + kCols + 2); }

// R rows of a staged k or q row from p, this lane's row group's first (row `first`), zeros past dk.
// FULL: dk == 8 R is known when compiling, so the vector reads need no branch.
template <int R, bool FULL>
__device__ __forceinline__ void staged_rows(const float* p, int first, int dk, float (&x)[R]) {
  auto vector_reads = [&] {  // every row real
#pragma unroll
    for (int r = 0; r < R; r += 4) {
      const float4 a = *reinterpret_cast<const float4*>(p + r);
      x[r] = a.x, x[r + 1] = a.y, x[r + 2] = a.z, x[r + 3] = a.w;
    }
  };
  if constexpr (FULL) {
    static_assert(R % 4 == 0, "whole float4 rows");
    vector_reads();
  } else {
    if constexpr (R % 4 == 0) {
      if (dk == 8 * R) return vector_reads();
    }
#pragma unroll
    for (int r = 0; r < R; ++r) x[r] = first + r < dk ? p[r] : 0.0f;
  }
}

// One warp per (sequence, value head, 8 state columns): lane = 4 * row_group + column pair, each
// lane keeps R rows of two columns of S in registers (8 row groups cover dk <= 8R). Per token t:
//   S *= exp(g_t); kv = S^T k_t; d = (v_t - kv) beta_t; S += k_t d^T; o_t = bf16(S^T q_t)
// The kv sums come from dots one token ahead (below), reduced together with the previous token's
// output sums, so a token's critical path is a few scalar ops and one fma, with the dots and the
// shuffle tree beside it; two columns a lane share the row loads and the loop. Inputs are staged
// into shared memory up to two chunks ahead, so no token waits for a global load. Sequences of
// chunked_from tokens or more are the chunked form's.
template <int R, bool FULL>
__global__ void gated_delta_rule_kernel(const float* q, const float* k, const float* v, const float* beta,
                                        const float* g, SeqTable seqs, uint16_t* o, int Hk, int dk, int Hv, int dv,
                                        bool rows16, bool v16, bool o_pairs, int chunked_from) {
  extern __shared__ __align__(16) float staged[];  // kBuffers staging buffers
  const int lane = threadIdx.x, gi = lane / 4, pair = lane % 4;
  const int s = blockIdx.z, h = blockIdx.y, hk = h / (Hv / Hk);
  const int j0 = blockIdx.x * kCols + 2 * pair;  // this lane's columns j0 and j0 + 1
  const int t0 = seqs.offsets[s], t1 = seqs.offsets[s + 1], T = t1 - t0;
  if (T == 0 || T >= chunked_from) return;
  const int stride = staged_floats(dk), chunks = (T + kChunk - 1) / kChunk;
  const int v_at = 2 * kChunk * dk, g_at = v_at + kChunk * kCols, beta_at = g_at + kChunk;

  // Every lane issues its share of chunk c's copies, as one commit group (empty past the end).
  // A lane copies the same pieces of every token's rows (at most kPieces 16-byte pieces a row), so
  // the per-token cost is its copies and three pointer steps.
  constexpr int kPieces = (2 * R + 31) / 32;
  const int64_t row_step = int64_t(Hk) * dk;
  auto stage = [&](int c) {
    if (c < chunks) {
      float* base = staged + (c % kBuffers) * stride;
      const int tc = t0 + c * kChunk, n = min(kChunk, t1 - tc);
      const float* kt = k + (int64_t(tc) * Hk + hk) * dk;
      const float* qt = q + (int64_t(tc) * Hk + hk) * dk;
      float* dst = base;
      if (rows16) {
        for (int i = 0; i < n; ++i, kt += row_step, qt += row_step, dst += 2 * dk) {
#pragma unroll
          for (int e = 0; e < kPieces; ++e) {
            const int p = 4 * (lane + 32 * e);
            if (p < dk) {
              cp_async_16(dst + p, kt + p);
              cp_async_16(dst + dk + p, qt + p);
            }
          }
        }
      } else {
        for (int i = 0; i < n; ++i, kt += row_step, qt += row_step, dst += 2 * dk)
          for (int p = lane; p < dk; p += 32) {
            cp_async_4(dst + p, kt + p);
            cp_async_4(dst + dk + p, qt + p);
          }
      }
      const int c0 = blockIdx.x * kCols;
      if (v16) {  // lane = 2 * token + half
        if (lane < 2 * n) cp_async_16(base + v_at + 4 * lane, v + (int64_t(tc + lane / 2) * Hv + h) * dv + c0 + 4 * (lane & 1));
      } else {
        for (int p = lane; p < n * kCols; p += 32)
          if (c0 + p % kCols < dv) cp_async_4(base + v_at + p, v + (int64_t(tc + p / kCols) * Hv + h) * dv + c0 + p % kCols);
      }
      if (lane < n) {  // g and beta: lane = token
        const int64_t th = int64_t(tc + lane) * Hv + h;
        cp_async_4(base + g_at + lane, g + th);
        cp_async_4(base + beta_at + lane, beta + th);
      }
    }
    cp_async_commit();
  };

  stage(0);
  stage(1);
  cp_async_wait<1>();
  __syncwarp();

  // Token t's kv sums need S_{t-1}, which needs d_{t-1}; but S_{t-1}^T k_t = e_{t-1} S_{t-2}^T k_t +
  // (k_{t-1} . k_t) d_{t-1}, so the dots and their shuffle tree run one token ahead, on the state
  // before the update: a token's chain is a few scalar ops and one fma a state element.
  float S0[R], S1[R], kr[R], qprev[R];
#pragma unroll
  for (int r = 0; r < R; ++r) S0[r] = S1[r] = qprev[r] = 0.0f;
  staged_rows<R, FULL>(staged + gi * R, gi * R, dk, kr);
  // P = S_{t-2}^T k_t (per column), kappa = k_{t-1} . k_t, d_{t-1}, e_{t-1} = exp(g_{t-1}): all zero
  // before the first token (S starts at zero)
  float P0 = 0.0f, P1 = 0.0f, kappa = 0.0f, dprev0 = 0.0f, dprev1 = 0.0f, eprev = 0.0f;
  const bool has0 = j0 < dv, has1 = j0 + 1 < dv, pairs = has1 && o_pairs;
  const int64_t o_step = int64_t(Hv) * dv;
  uint16_t* orow = o + (int64_t(t0) * Hv + h) * dv + j0;  // token t - 1's output row
  auto store = [&](float a, float b) {
    if (gi != 0) return;
    if (pairs) {
      *reinterpret_cast<uint32_t*>(orow) = uint32_t(st_bf16(a)) | uint32_t(st_bf16(b)) << 16;
    } else {
      if (has0) orow[0] = st_bf16(a);
      if (has1) orow[1] = st_bf16(b);
    }
  };
  float kb[R], qb[R];  // the other halves of the (k_t, k_{t+1}) and (q_{t-1}, q_t) pairs
  // Token i of chunk c with k_t in kcur, q_{t-1} in qold; leaves k_{t+1} in knext, q_t in qnew. Two
  // tokens a loop pass swap the arrays' roles, so no row is copied between registers.
  auto token = [&](int c, int i, float (&kcur)[R], float (&knext)[R], float (&qold)[R], float (&qnew)[R]) {
    const float* cur = staged + (c % kBuffers) * stride;
    const float* nxt = staged + ((c + 1) % kBuffers) * stride;
    const int n = min(kChunk, T - c * kChunk);
    const bool last_chunk = c + 1 == chunks;
    if (i == kChunk - 1 && !last_chunk) {
      // Token i + 1 is the next chunk's first: it must have landed. Chunk c - 1's buffer is
      // free (its last reads were a chunk ago), so chunk c + 2 is staged into it first.
      __syncwarp();
      stage(c + 2);
      cp_async_wait<1>();
      __syncwarp();
    }
    // Token i's q row, v pair, beta and g; the next token's k row: in this chunk, the next chunk's
    // first, or this token's own after the last (its sums are not used).
    const float* qp = cur + (2 * i + 1) * dk + gi * R;
    const float* vp = cur + v_at + i * kCols + 2 * pair;
    const float b = cur[beta_at + i], gt = cur[g_at + i];
    const float* kn_at = i + 1 < n ? qp + dk : last_chunk ? qp - dk : nxt + gi * R;
    staged_rows<R, FULL>(qp, gi * R, dk, qnew);
    staged_rows<R, FULL>(kn_at, gi * R, dk, knext);
    // on S_{t-1}, before this token's update: S_{t-1}^T k_{t+1}, token t - 1's output, k_t . k_{t+1}
    float sums[5] = {dot_rows<R>(S0, knext), dot_rows<R>(S1, knext), dot_rows<R>(S0, qold), dot_rows<R>(S1, qold),
                     dot_rows<R>(kcur, knext)};
    const float e = expf(gt);
    const float kv0 = e * (eprev * P0 + kappa * dprev0), kv1 = e * (eprev * P1 + kappa * dprev1);
    const float d0 = ((has0 ? vp[0] : 0.0f) - kv0) * b;
    const float d1 = ((has1 ? vp[1] : 0.0f) - kv1) * b;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      S0[r] = __fmaf_rn(kcur[r], d0, S0[r] * e);
      S1[r] = __fmaf_rn(kcur[r], d1, S1[r] * e);
    }
    row_group_sums<5>(sums);
    if (c + i > 0) {
      store(sums[2], sums[3]);
      orow += o_step;
    }
    P0 = sums[0], P1 = sums[1], kappa = sums[4];
    dprev0 = d0, dprev1 = d1, eprev = e;
  };
  // k_t alternates between kr and kb, q_{t-1} between qprev and qb; a chunk's token count is even
  // but for the last chunk's, whose odd token leaves the pair's halves in kb and qb
  static_assert(kChunk % 2 == 0, "whole chunks are token pairs");
  bool swapped = false;
  for (int c = 0; c < chunks; ++c) {
    const int n = min(kChunk, T - c * kChunk);
    for (int i = 0; i < n; i += 2) {
      token(c, i, kr, kb, qprev, qb);
      if (i + 1 < n) token(c, i + 1, kb, kr, qb, qprev);
      else swapped = true;
    }
  }
  if (swapped)
#pragma unroll
    for (int r = 0; r < R; ++r) qprev[r] = qb[r];
  // the last token's output, on the final state
  float last[2] = {dot_rows<R>(S0, qprev), dot_rows<R>(S1, qprev)};
  row_group_sums<2>(last);
  store(last[0], last[1]);
  cp_async_wait<0>();  // no copy outlives the block
}

// TF_DELTA_RULE=recurrent or chunked puts every sequence on one form (to compare the forms).
int delta_rule_chunked_from() {
  const std::string form = env_switch("TF_DELTA_RULE", {"auto", "recurrent", "chunked"});
  return form == "recurrent" ? INT_MAX : form == "chunked" ? 1 : int(kDeltaRuleChunkedFrom);
}

// The kernel for R rows a lane (FULL: dk == 8 R), allowed (once) the shared memory its largest dk stages.
template <int R, bool FULL = false>
auto recurrent_kernel() {
  static const bool allowed = [] {
    const size_t most = kBuffers * sizeof(float) * static_cast<size_t>(staged_floats(8 * R));
    if (most > 48 * 1024)
      TF_CUDA(cudaFuncSetAttribute(gated_delta_rule_kernel<R, FULL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(most)));
    return true;
  }();
  (void)allowed;
  return gated_delta_rule_kernel<R, FULL>;
}

}  // namespace

void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y) {
  int64_t T = x.dim(0), C = x.dim(1);
  if (T * C == 0) return;
  SeqTable seqs = make_seq_table("causal_conv1d_silu", seq_offsets);
  const auto* xp = static_cast<const uint16_t*>(x.data);
  const auto* wp = static_cast<const uint16_t*>(w.data);
  auto* yp = static_cast<uint16_t*>(y.data);
  const int K = static_cast<int>(w.dim(2));
  // the released geometry (K = 4, channels in eights) on the vector kernel; anything else one channel a thread
  if (K == 4 && bf16x8_ok(C, {xp, yp, wp}))
    causal_conv1d_silu_kernel<8, 4><<<dim3(unsigned(T), blocks_for(C / 8, kThreads)), kThreads, 0, stream()>>>(
        xp, wp, seqs, yp, C, K);
  else
    causal_conv1d_silu_kernel<1, 0><<<dim3(unsigned(T), blocks_for(C, kThreads)), kThreads, 0, stream()>>>(xp, wp, seqs,
                                                                                                         yp, C, K);
  TF_CUDA_LAUNCH("causal_conv1d_silu_kernel");
}

void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  int64_t T = q.dim(0), Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  if (T == 0) return;
  const float q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));  // dk ** -0.5 as python does
  // Few tokens: one warp per q or k head, at most 8 blocks a token. From two blocks an SM on, one block
  // a token fills the GPU and more blocks only repeat the per-block work.
  const unsigned slices =
      T >= 2 * sm_count() ? 1u : unsigned(std::clamp<int64_t>((2 * Hk + kThreads / 32 - 1) / (kThreads / 32), 1, 8));
  delta_net_prep_kernel<<<dim3(static_cast<unsigned>(T), slices), kThreads, 0, stream()>>>(
      static_cast<const uint16_t*>(mixed.data), static_cast<const uint16_t*>(b.data),
      static_cast<const uint16_t*>(a.data), A_log.data, A_log.dtype == DType::F32, dt_bias.data,
      dt_bias.dtype == DType::F32, q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(), g.ptr<float>(),
      int(Hk), int(dk), int(Hv), int(dv), q_scale);
  TF_CUDA_LAUNCH("delta_net_prep_kernel");
}

void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o) {
  int Hk = int(q.dim(1)), dk = int(q.dim(2)), Hv = int(v.dim(1)), dv = int(v.dim(2));
  if (q.dim(0) == 0 || Hv == 0 || dv == 0) return;
  if (Hk == 0 || Hv % Hk != 0)
    fail("gated_delta_rule: value heads (" + std::to_string(Hv) + ") must be a multiple of key heads (" +
         std::to_string(Hk) + ")");
  if (dk > 256) fail("gated_delta_rule: the CUDA kernel holds key head dims up to 256, got " + std::to_string(dk));
  SeqTable seqs = make_seq_table("gated_delta_rule", seq_offsets);
  // A sequence's form depends on its own length only, so packing never changes its bytes.
  const int chunked_from = delta_rule_chunked_from();
  bool any_long = false, any_short = false;
  for (int s = 0; s < seqs.count; ++s) {
    const int n = seqs.offsets[s + 1] - seqs.offsets[s];
    any_long |= n >= chunked_from;
    any_short |= n > 0 && n < chunked_from;
  }
  if (any_long) launch_delta_rule_chunked(q, k, v, beta, g, seqs, chunked_from, o);
  if (!any_short) return;
  auto aligned = [](const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; };
  const dim3 grid((dv + kCols - 1) / kCols, Hv, seqs.count);
  const size_t smem = kBuffers * sizeof(float) * static_cast<size_t>(staged_floats(dk));
  // 16-byte k/q and v copies, 4-byte output pairs where the shapes and addresses allow
  const bool rows16 = dk % 4 == 0 && aligned(q.data, 16) && aligned(k.data, 16);
  const bool v16 = dv % kCols == 0 && aligned(v.data, 16), o_pairs = dv % 2 == 0 && aligned(o.data, 4);
  auto args = [&](auto kernel) {
    kernel<<<grid, 32, smem, stream()>>>(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(),
                                         g.ptr<float>(), seqs, static_cast<uint16_t*>(o.data), Hk, dk, Hv, dv, rows16,
                                         v16, o_pairs, chunked_from);
  };
  if (dk <= 8) args(recurrent_kernel<1>());
  else if (dk <= 16) args(recurrent_kernel<2>());
  else if (dk <= 32) args(recurrent_kernel<4>());
  else if (dk <= 64) args(recurrent_kernel<8>());
  else if (dk == 128) args(recurrent_kernel<16, true>());
  else if (dk <= 128) args(recurrent_kernel<16>());
  else args(recurrent_kernel<32>());
  TF_CUDA_LAUNCH("gated_delta_rule_kernel");
}

}  // namespace tf::cuda
