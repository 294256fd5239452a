// Gated DeltaNet's inputs on CUDA: the causal depthwise conv + SiLU, the prep (q/k L2 norm in fp32,
// beta, decay), and the two in one kernel that computes each conv value where the prep reads it,
// bit for bit what the two kernels give through the bf16 conv tensor.
#include <algorithm>
#include <cmath>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/primitives/dependent_launch.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/conv/causal_conv1d_silu.h"
#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"
#include "backend/delta_rule/delta_net_prep.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kHeld = 4;  // q / k values a lane holds in registers: head dims up to 128 are read once

// silu(bf16(sum_j w[c, j] x[t - K + 1 + j, c])) for V channels from c (fp32, before the output's
// bf16 rounding), taps before the sequence start skipped. kK > 0: V x kK weights read at once (16-byte
// pieces when V = 8); kK = 0: one weight at a time for any K.
template <int V, int kK>
__device__ __forceinline__ void conv_silu(const uint16_t* x, const uint16_t* w, int64_t t, int64_t start, int64_t C,
                                          int64_t c, int K, float (&out)[V]) {
  float xs[V];
#pragma unroll
  for (int e = 0; e < V; ++e) out[e] = 0.0f;
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
      for (int e = 0; e < V; ++e) out[e] = out[e] + wv[e * kK + j] * xs[e];
    }
  } else {
    for (int j = 0; j < K; ++j) {
      const int64_t src = t - (K - 1) + j;
      if (src < start) continue;
      ld_bf16x<V>(x + src * C + c, xs);
#pragma unroll
      for (int e = 0; e < V; ++e) out[e] = out[e] + ld_bf16(w, (c + e) * K + j) * xs[e];
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e) out[e] = silu32(round_bf16(out[e]));
}

// y[t, c] = bf16(silu(bf16(sum_j w[c, j] x[t - K + 1 + j, c]))), zeros before the sequence start. V
// channels per thread; grid: (tokens, channel blocks), so no thread divides by C.
template <int V, int kK>
__global__ void causal_conv1d_silu_kernel(const uint16_t* x, const uint16_t* w, SeqTable seqs, uint16_t* y,
                                          int64_t C, int K) {
  const int64_t c = (blockIdx.y * int64_t(blockDim.x) + threadIdx.x) * V;
  if (c >= C) return;
  const int64_t t = blockIdx.x;
  float out[V];
  conv_silu<V, kK>(x, w, t, seqs.offsets[seq_of(seqs, static_cast<int>(t))], C, c, K, out);
  st_bf16x<V>(y + t * C + c, out);
}

// The prep's input: the conv output as a bf16 tensor.
struct ConvOutput {
  const uint16_t* mixed;
  int64_t width;
  __device__ int64_t start(int64_t) const { return 0; }
  __device__ float at(int64_t t, int64_t, int64_t c) const { return ld_bf16(mixed, t * width + c); }
  __device__ bool rows8(int64_t t, int64_t c) const {
    return (reinterpret_cast<uintptr_t>(mixed + t * width + c) & 15) == 0;
  }
  __device__ void at8(int64_t t, int64_t, int64_t c, float (&x)[8]) const { ld_bf16x<8>(mixed + t * width + c, x); }
  __device__ void prefetch_weights(int64_t, int64_t) const {}
};

// The prep's input computed where it is read: the conv + SiLU of the in-projection's rows, rounded
// to bf16 as the conv tensor would hold it. kK = 4: the taps known when compiling (eight channels'
// weights in 16-byte reads); kK = 0: any K.
template <int kK>
struct ConvOnRead {
  const uint16_t* x;
  const uint16_t* w;
  SeqTable seqs;
  int64_t width;
  int K;
  __device__ int64_t start(int64_t t) const { return seqs.offsets[seq_of(seqs, static_cast<int>(t))]; }
  __device__ float at(int64_t t, int64_t start, int64_t c) const {
    float y[1];
    conv_silu<1, kK>(x, w, t, start, width, c, K, y);
    return round_bf16(y[0]);
  }
  __device__ bool rows8(int64_t, int64_t c) const { return kK == 4 && c % 8 == 0; }
  // channels [c, c + n)'s taps into L1: they do not depend on the product this prep waits for
  __device__ void prefetch_weights(int64_t c, int64_t n) const {
    for (int64_t b = (c * K * 2) & ~int64_t(127); b < (c + n) * K * 2; b += 128)
      asm volatile("prefetch.global.L1 [%0];" ::"l"(reinterpret_cast<const char*>(w) + b));
  }
  __device__ void at8(int64_t t, int64_t start, int64_t c, float (&y)[8]) const {
    conv_silu<8, kK>(x, w, t, start, width, c, K, y);
#pragma unroll
    for (int e = 0; e < 8; ++e) y[e] = round_bf16(y[e]);
  }
};

// Which of a token's gridDim.y blocks do which of the prep's three jobs: the q / k head rows, v, and
// beta with the decay. Short prompts give the head rows and v blocks of their own (the gates ride on
// v's), so the jobs wait on their reads side by side; longer ones give every block all three.
struct PrepJobs {
  int heads0, heads, v0, vs, gates0, gates;  // first block and block count of each job
};

// A token's blocks: their warps L2-normalise the q and k heads (fp32), their threads copy v to fp32
// and make beta and the decay g (PrepJobs says which blocks do which). Outputs never alias inputs
// (restrict), and a lane's values are loaded before its first store, so no load waits behind a store.
template <class Source>
__global__ void __launch_bounds__(kThreads, 4)
    delta_net_prep_kernel(Source in, PrepJobs jobs, const uint16_t* __restrict__ b, const uint16_t* __restrict__ a,
                          const void* __restrict__ A_log, bool A_f32, const void* __restrict__ dt_bias, bool dt_f32,
                          float* __restrict__ q, float* __restrict__ k, float* __restrict__ v,
                          float* __restrict__ beta, float* __restrict__ g, int Hk, int dk, int Hv, int dv,
                          float q_scale) {
  const int key_dim = Hk * dk;
  const int lane = threadIdx.x % 32, y = blockIdx.y;
  const bool does_heads = y >= jobs.heads0 && y < jobs.heads0 + jobs.heads;
  const bool does_v = y >= jobs.v0 && y < jobs.v0 + jobs.vs;
  const bool does_gates = y >= jobs.gates0 && y < jobs.gates0 + jobs.gates;
  // a job's warp and thread among the token's blocks doing that job
  const int warp = (y - jobs.heads0) * (blockDim.x / 32) + threadIdx.x / 32, warps = blockDim.x / 32 * jobs.heads;
  const int v_thread = (y - jobs.v0) * blockDim.x + threadIdx.x, v_threads = blockDim.x * jobs.vs;
  const int g_thread = (y - jobs.gates0) * blockDim.x + threadIdx.x, g_threads = blockDim.x * jobs.gates;
  // the first head row's and v piece's conv taps, asked for while the product before still runs
  if (does_heads && warp < 2 * Hk && lane == 0)
    in.prefetch_weights((warp >= Hk ? key_dim : 0) + int64_t(warp % Hk) * dk, dk);
  if (does_v && v_thread * 8 < Hv * dv) in.prefetch_weights(2 * int64_t(key_dim) + v_thread * 8, 8);
  wait_for_prerequisite_grid();  // launched as a dependent, it may start before the product it reads ends
  const int64_t t = blockIdx.x, start = in.start(t);
  // a gate thread's first head: its reads issued ahead of the other jobs' so that they wait together
  const int h0 = g_thread;
  float b0 = 0.0f, x0 = 0.0f, A0 = 0.0f;
  if (does_gates && h0 < Hv) {
    b0 = ld_bf16(b, t * Hv + h0);
    x0 = ld_bf16(a, t * Hv + h0) + ld_weight(dt_bias, dt_f32, h0);
    A0 = ld_weight(A_log, A_f32, h0);
  }
  for (int hr = warp; does_heads && hr < 2 * Hk; hr += warps) {
    const bool is_k = hr >= Hk;
    const int head = is_k ? hr - Hk : hr;
    const int64_t c0 = (is_k ? key_dim : 0) + int64_t(head) * dk;
    float* dst = (is_k ? k : q) + (t * Hk + head) * dk;
    // a lane's first kHeld values are read once, all before the first is used; the sum runs in
    // element order i = lane, lane + 32, ... whichever way a value was read
    float held[kHeld], ss = 0.0f;
#pragma unroll
    for (int m = 0; m < kHeld; ++m) held[m] = lane + 32 * m < dk ? in.at(t, start, c0 + lane + 32 * m) : 0.0f;
#pragma unroll
    for (int m = 0; m < kHeld; ++m)
      if (lane + 32 * m < dk) ss = ss + held[m] * held[m];
    for (int i = lane + 32 * kHeld; i < dk; i += 32) {
      float x = in.at(t, start, c0 + i);
      ss = ss + x * x;
    }
    ss = group_sum<32>(ss);
    const float inv = 1.0f / sqrtf(ss + 1e-6f);
    auto put = [&](int i, float x) {
      float n = x * inv;
      dst[i] = is_k ? n : n * q_scale;
    };
#pragma unroll
    for (int m = 0; m < kHeld; ++m)
      if (lane + 32 * m < dk) put(lane + 32 * m, held[m]);
    for (int i = lane + 32 * kHeld; i < dk; i += 32) put(i, in.at(t, start, c0 + i));
  }
  const int64_t v0 = 2 * int64_t(key_dim);
  float* vdst = v + t * Hv * dv;
  const int n_v = Hv * dv;
  if (does_v && n_v % 8 == 0 && in.rows8(t, v0)) {
    for (int i = v_thread * 8; i < n_v; i += v_threads * 8) {
      float x[8];
      in.at8(t, start, v0 + i, x);
#pragma unroll
      for (int e = 0; e < 8; ++e) vdst[i + e] = x[e];
    }
  } else {
    for (int i = v_thread; does_v && i < n_v; i += v_threads) vdst[i] = in.at(t, start, v0 + i);
  }
  for (int h = g_thread; does_gates && h < Hv; h += g_threads) {
    const bool first = h == h0;
    beta[t * Hv + h] = round_bf16(sigmoid32(first ? b0 : ld_bf16(b, t * Hv + h)));  // b.sigmoid() on bf16
    float x = first ? x0 : ld_bf16(a, t * Hv + h) + ld_weight(dt_bias, dt_f32, h);
    float softplus = x > 20.0f ? x : log1pf(expf(x));
    g[t * Hv + h] = -expf(first ? A0 : ld_weight(A_log, A_f32, h)) * softplus;
  }
}

template <class Source>
void launch_prep(const Source& in, const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                 Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  int64_t T = q.dim(0), Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  const float q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));  // dk ** -0.5 as python does
  // Few tokens: the head rows (a warp a q or k row) and v (an 8-value piece a thread, the gates on
  // the same threads) in blocks of their own where every block is on the GPU at once; else each of a
  // token's blocks does all three, one block a token from two blocks an SM on (more only repeat the
  // per-block work).
  const int warps = kThreads / 32;
  const int head_blocks = int((2 * Hk + warps - 1) / warps), v_blocks = int((Hv * dv / 8 + kThreads - 1) / kThreads);
  const int gate_blocks = int((Hv + kThreads - 1) / kThreads), own = head_blocks + std::max(v_blocks, gate_blocks);
  static const int resident = [] {
    int n = 0;
    TF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, delta_net_prep_kernel<Source>, kThreads, 0));
    return n;
  }();
  PrepJobs jobs{};
  if (T * own <= int64_t(resident) * sm_count()) {
    jobs = {0, head_blocks, head_blocks, v_blocks, head_blocks, gate_blocks};  // the gates on v's threads
  } else {
    const int slices = T >= 2 * sm_count() ? 1 : std::clamp(head_blocks, 1, 8);
    jobs = {0, slices, 0, slices, 0, slices};
  }
  const unsigned slices = unsigned(std::max({jobs.heads0 + jobs.heads, jobs.v0 + jobs.vs, jobs.gates0 + jobs.gates}));
  cudaLaunchAttribute attr = programmatic_dependence();
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(T), slices);
  cfg.blockDim = dim3(kThreads);
  cfg.stream = stream();
  cfg.attrs = &attr;
  cfg.numAttrs = launch_prep_as_dependent() ? 1 : 0;
  const cudaError_t err = cudaLaunchKernelEx(
      &cfg, delta_net_prep_kernel<Source>, in, jobs, static_cast<const uint16_t*>(b.data),
      static_cast<const uint16_t*>(a.data), A_log.data, A_log.dtype == DType::F32, dt_bias.data,
      dt_bias.dtype == DType::F32, q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), beta.ptr<float>(), g.ptr<float>(),
      int(Hk), int(dk), int(Hv), int(dv), q_scale);
  if (err != cudaSuccess) fail_cuda(err, "launch of delta_net_prep_kernel", __FILE__, __LINE__);
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
  if (q.dim(0) == 0) return;
  launch_prep(ConvOutput{static_cast<const uint16_t*>(mixed.data), mixed.dim(1)}, b, a, A_log, dt_bias, q, k, v, beta,
              g);
}

void causal_conv1d_silu_delta_net_prep(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets,
                                       const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                                       Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  const int64_t T = q.dim(0);
  if (T == 0) return;
  if (T >= 2 * sm_count()) {  // long prompts: the conv kernel's 16-byte reads beat computing conv values on read
    Tensor conv = empty(DType::BF16, x.shape, Device::CUDA);
    cuda::causal_conv1d_silu(x, w, seq_offsets, conv);
    return cuda::delta_net_prep(conv, b, a, A_log, dt_bias, q, k, v, beta, g);
  }
  SeqTable seqs = make_seq_table("causal_conv1d_silu_delta_net_prep", seq_offsets);
  const auto* xp = static_cast<const uint16_t*>(x.data);
  const auto* wp = static_cast<const uint16_t*>(w.data);
  const int K = static_cast<int>(w.dim(2));
  // the released geometry (K = 4, rows and weights in 16-byte pieces) reads each tap set in one piece
  if (K == 4 && bf16x8_ok(x.dim(1), {xp, wp}))
    launch_prep(ConvOnRead<4>{xp, wp, seqs, x.dim(1), K}, b, a, A_log, dt_bias, q, k, v, beta, g);
  else
    launch_prep(ConvOnRead<0>{xp, wp, seqs, x.dim(1), K}, b, a, A_log, dt_bias, q, k, v, beta, g);
}

}  // namespace tf::cuda
