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
// when V = 8), with kK = 0 one weight at a time for any K.
template <int V, int kK>
__global__ void causal_conv1d_silu_kernel(const uint16_t* x, const uint16_t* w, SeqTable seqs, uint16_t* y,
                                          int64_t T, int64_t C, int K) {
  const int64_t i = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) * V;
  if (i >= T * C) return;
  const int64_t t = i / C, c = i % C;
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

// One block per token: warps L2-normalise the q and k heads (fp32), then all threads copy v to
// fp32 and the first Hv threads make beta and the decay g. Outputs never alias inputs (restrict),
// and a lane's values are loaded before its first store, so no load waits behind a store.
__global__ void delta_net_prep_kernel(const uint16_t* __restrict__ mixed, const uint16_t* __restrict__ b,
                                      const uint16_t* __restrict__ a, const void* __restrict__ A_log, bool A_f32,
                                      const void* __restrict__ dt_bias, bool dt_f32, float* __restrict__ q,
                                      float* __restrict__ k, float* __restrict__ v, float* __restrict__ beta,
                                      float* __restrict__ g, int Hk, int dk, int Hv, int dv, float q_scale) {
  const int64_t t = blockIdx.x;
  const int width = 2 * Hk * dk + Hv * dv, key_dim = Hk * dk;
  const uint16_t* row = mixed + t * width;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
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
    for (int i = threadIdx.x * 8; i < n_v; i += blockDim.x * 8) {
      float x[8];
      ld_bf16x<8>(vsrc + i, x);
#pragma unroll
      for (int e = 0; e < 8; ++e) vdst[i + e] = x[e];
    }
  } else {
    for (int i = threadIdx.x; i < n_v; i += blockDim.x) vdst[i] = ld_bf16(vsrc, i);
  }
  for (int h = threadIdx.x; h < Hv; h += blockDim.x) {
    beta[t * Hv + h] = round_bf16(sigmoid32(ld_bf16(b, t * Hv + h)));  // b.sigmoid() on bf16
    float x = ld_bf16(a, t * Hv + h) + ld_weight(dt_bias, dt_f32, h);
    float softplus = x > 20.0f ? x : log1pf(expf(x));
    g[t * Hv + h] = -expf(ld_weight(A_log, A_f32, h)) * softplus;
  }
}

// Sum over the 8 row groups of a warp (lane bits 2..4): the same bits in every lane of a column.
__device__ __forceinline__ float row_group_sum(float v) {
  v = v + __shfl_xor_sync(0xffffffffu, v, 4);
  v = v + __shfl_xor_sync(0xffffffffu, v, 8);
  v = v + __shfl_xor_sync(0xffffffffu, v, 16);
  return v;
}

// Tokens staged in shared memory per step (double-buffered, by cp.async).
constexpr int kChunk = 8;

// A staging buffer's floats: k and q rows [kChunk][2][dk], then v [kChunk][4], g [kChunk], beta [kChunk].
__host__ __device__ constexpr int staged_floats(int dk) { return kChunk * (2 * dk + 6); }

// One warp per (sequence, value head, 4 state columns): lane = 4 * row_group + column, each lane
// keeps R rows of its column of S in registers (8 row groups cover dk <= 8R). Per token:
//   S *= exp(g); kv = S^T k; d = (v - kv) * beta; S += k d^T; o = bf16(S^T q)
// The next kChunk tokens' inputs are copied to shared memory while this chunk computes, so no
// token waits for a global load. Sequences of chunked_from tokens or more are the chunked form's.
template <int R>
__global__ void gated_delta_rule_kernel(const float* q, const float* k, const float* v, const float* beta,
                                        const float* g, SeqTable seqs, uint16_t* o, int Hk, int dk, int Hv, int dv,
                                        bool rows16, int chunked_from) {
  extern __shared__ __align__(16) float staged[];  // two staging buffers
  const int lane = threadIdx.x, gi = lane / 4, col = lane % 4;
  const int s = blockIdx.z, h = blockIdx.y, j = blockIdx.x * 4 + col, hk = h / (Hv / Hk);
  const bool has_col = j < dv;
  const bool full = dk == 8 * R;  // every row real: vector reads
  const int t0 = seqs.offsets[s], t1 = seqs.offsets[s + 1];
  if (t1 - t0 >= chunked_from) return;
  const int stride = staged_floats(dk);

  // Every lane issues its share of chunk c's copies into buffer `buf`, as one commit group; lanes
  // walk each token's pieces without integer division (this loop shares the issue slots).
  auto stage = [&](int c, int buf) {
    float* base = staged + buf * stride;
    const int tc = t0 + c * kChunk, n = min(kChunk, t1 - tc);
    const int width = rows16 ? dk / 4 : dk;  // copies per k or q row
    for (int i = 0; i < n; ++i) {
      const float* kt = k + (int64_t(tc + i) * Hk + hk) * dk;
      const float* qt = q + (int64_t(tc + i) * Hk + hk) * dk;
      float* dst = base + 2 * i * dk;
      for (int p = lane; p < 2 * width; p += 32) {
        const bool is_q = p >= width;
        const int piece = is_q ? p - width : p;
        if (rows16) cp_async_16(dst + (is_q ? dk : 0) + 4 * piece, (is_q ? qt : kt) + 4 * piece);
        else cp_async_4(dst + (is_q ? dk : 0) + piece, (is_q ? qt : kt) + piece);
      }
    }
    float* sv = base + kChunk * 2 * dk;
    if (lane < 4 * n) {  // v: lane = 4 * token + column
      const int i = lane >> 2, f = lane & 3, cv = blockIdx.x * 4 + f;
      if (cv < dv) cp_async_4(sv + lane, v + (int64_t(tc + i) * Hv + h) * dv + cv);
    }
    if (lane < n) {  // g and beta: lane = token
      const int64_t th = int64_t(tc + lane) * Hv + h;
      cp_async_4(sv + 4 * kChunk + lane, g + th);
      cp_async_4(sv + 5 * kChunk + lane, beta + th);
    }
    cp_async_commit();
  };

  float S[R];
#pragma unroll
  for (int r = 0; r < R; ++r) S[r] = 0.0f;

  const int chunks = (t1 - t0 + kChunk - 1) / kChunk;
  if (chunks > 0) stage(0, 0);
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) {
      stage(c + 1, (c + 1) & 1);  // in flight while this chunk computes
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncwarp();
    const float* base = staged + (c & 1) * stride;
    const float* sv = base + kChunk * 2 * dk;
    const float* sg = sv + 4 * kChunk;
    const float* sb = sg + kChunk;
    const int tc = t0 + c * kChunk, n = min(kChunk, t1 - tc);
    for (int i = 0; i < n; ++i) {
      const float* kt = base + 2 * i * dk + gi * R;
      const float* qt = kt + dk;
      float kr[R], qr[R];
      if constexpr (R % 4 == 0) {
        if (full) {
#pragma unroll
          for (int r = 0; r < R; r += 4) {
            float4 a = *reinterpret_cast<const float4*>(kt + r), b = *reinterpret_cast<const float4*>(qt + r);
            kr[r] = a.x, kr[r + 1] = a.y, kr[r + 2] = a.z, kr[r + 3] = a.w;
            qr[r] = b.x, qr[r + 1] = b.y, qr[r + 2] = b.z, qr[r + 3] = b.w;
          }
        }
      }
      if (!(R % 4 == 0 && full)) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const bool real = gi * R + r < dk;
          kr[r] = real ? kt[r] : 0.0f;
          qr[r] = real ? qt[r] : 0.0f;
        }
      }
      const float decay = expf(sg[i]), b_cur = sb[i], v_cur = has_col ? sv[4 * i + col] : 0.0f;
      float kv = 0.0f;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        S[r] = S[r] * decay;
        kv = __fmaf_rn(S[r], kr[r], kv);  // the contract's sum model holds with or without fma
      }
      kv = row_group_sum(kv);
      const float d = (v_cur - kv) * b_cur;
      float out = 0.0f;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        S[r] = __fmaf_rn(kr[r], d, S[r]);
        out = __fmaf_rn(S[r], qr[r], out);
      }
      out = row_group_sum(out);
      if (gi == 0 && has_col) o[(int64_t(tc + i) * Hv + h) * dv + j] = st_bf16(out);
    }
    __syncwarp();  // this buffer is staged again for chunk c + 2
  }
}

// TF_DELTA_RULE=recurrent keeps every sequence on the recurrent kernel (to compare the forms).
bool recurrent_forced() { return env_switch("TF_DELTA_RULE", {"auto", "recurrent"}) == "recurrent"; }

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
    causal_conv1d_silu_kernel<8, 4><<<blocks_for(T * C / 8, kThreads), kThreads, 0, stream()>>>(xp, wp, seqs, yp, T, C,
                                                                                                 K);
  else
    causal_conv1d_silu_kernel<1, 0><<<blocks_for(T * C, kThreads), kThreads, 0, stream()>>>(xp, wp, seqs, yp, T, C, K);
  TF_CUDA_LAUNCH("causal_conv1d_silu_kernel");
}

void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  int64_t T = q.dim(0), Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  if (T == 0) return;
  const float q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));  // dk ** -0.5 as python does
  delta_net_prep_kernel<<<static_cast<unsigned>(T), kThreads, 0, stream()>>>(
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
  SeqTable seqs = make_seq_table("gated_delta_rule", seq_offsets);
  // A sequence's form depends on its own length only, so packing never changes its bytes.
  const int chunked_from = recurrent_forced() ? INT_MAX : int(kDeltaRuleChunkedFrom);
  int longest = 0;
  for (int s = 0; s < seqs.count; ++s) longest = std::max(longest, seqs.offsets[s + 1] - seqs.offsets[s]);
  if (longest >= chunked_from) launch_delta_rule_chunked(q, k, v, beta, g, seqs, chunked_from, o);
  dim3 grid(static_cast<unsigned>((dv + 3) / 4), static_cast<unsigned>(Hv), static_cast<unsigned>(seqs.count));
  const size_t smem = 2 * sizeof(float) * static_cast<size_t>(staged_floats(dk));
  const bool rows16 = dk % 4 == 0 && (reinterpret_cast<uintptr_t>(q.data) & 15) == 0 &&
                      (reinterpret_cast<uintptr_t>(k.data) & 15) == 0;
  auto args = [&](auto kernel) {
    kernel<<<grid, 32, smem, stream()>>>(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(),
                                         g.ptr<float>(), seqs, static_cast<uint16_t*>(o.data), Hk, dk, Hv, dv, rows16,
                                         chunked_from);
  };
  if (dk <= 8) args(gated_delta_rule_kernel<1>);
  else if (dk <= 16) args(gated_delta_rule_kernel<2>);
  else if (dk <= 32) args(gated_delta_rule_kernel<4>);
  else if (dk <= 64) args(gated_delta_rule_kernel<8>);
  else if (dk <= 128) args(gated_delta_rule_kernel<16>);
  else if (dk <= 256) args(gated_delta_rule_kernel<32>);
  else fail("gated_delta_rule: the CUDA kernel holds key head dims up to 256, got " + std::to_string(dk));
  TF_CUDA_LAUNCH("gated_delta_rule_kernel");
}

}  // namespace tf::cuda
