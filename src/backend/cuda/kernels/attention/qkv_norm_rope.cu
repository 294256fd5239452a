// qkv_norm_rope on CUDA: one warp a (token, q|k|v, head) row of d = 32 N elements, lane l holding
// elements 32 n + l (rms_norm_rows_kernel<32, N, 1, true>'s slots at d = 64 and 128, so the same sums
// and bytes as the steps); RoPE over the whole head pairs (i, i + d / 2) in the same lane. Other
// geometry runs the steps' kernels.
#include "backend/attention/qkv_norm_rope.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"

namespace tf::cuda {

namespace {

constexpr int kBlock = 256;

template <int N>
__global__ void qkv_norm_rope_kernel(const uint16_t* qkv, const uint16_t* q_norm, const uint16_t* k_norm, float eps,
                                     const uint16_t* cos, const uint16_t* sin, uint16_t* q, uint16_t* k, uint16_t* v,
                                     int64_t T, int H, int half) {
  constexpr int d = 32 * N;
  const int64_t row = blockIdx.x * int64_t(kBlock / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= T * 3 * H) return;  // a whole warp
  const int64_t t = row / (3 * H);
  const int part = static_cast<int>((row / H) % 3), h = static_cast<int>(row % H);
  const uint16_t* src = qkv + row * d;
  uint16_t* dst = (part == 0 ? q : part == 1 ? k : v) + (t * H + h) * d;
  float x[N];
#pragma unroll
  for (int n = 0; n < N; ++n) x[n] = ld_bf16(src, 32 * n + lane);
  if (part == 2) {
#pragma unroll
    for (int n = 0; n < N; ++n) dst[32 * n + lane] = src[32 * n + lane];
    return;
  }
  const uint16_t* w = part == 0 ? q_norm : k_norm;
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n) ss = ss + x[n] * x[n];
  ss = group_sum<32>(ss);
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  float y[N];
#pragma unroll
  for (int n = 0; n < N; ++n) y[n] = round_bf16(round_bf16(x[n] * r) * ld_bf16(w, 32 * n + lane));
  // RoPE over the whole head (2 half = d): element 32 n + l pairs with slot n -+ N / 2 of the same lane
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int i = 32 * n + lane, f = n < N / 2 ? i : i - half;
    const float c = ld_bf16(cos, t * half + f), s = ld_bf16(sin, t * half + f);
    const float other = y[n < N / 2 ? n + N / 2 : n - N / 2];
    const float out = round_bf16(y[n] * c) + round_bf16((n < N / 2 ? -other : other) * s);
    dst[i] = st_bf16(out);
  }
}

}  // namespace

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2), half = cos.dim(1);
  if (T == 0 || H == 0) return;
  auto bits = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data); };
  auto out = [](Tensor& t) { return static_cast<uint16_t*>(t.data); };
  const unsigned blocks = blocks_for(T * 3 * H, kBlock / 32);
  auto go = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream()>>>(bits(qkv), bits(q_norm), bits(k_norm), eps, bits(cos), bits(sin), out(q),
                                            out(k), out(v), T, static_cast<int>(H), static_cast<int>(half));
    TF_CUDA_LAUNCH("qkv_norm_rope_kernel");
  };
  if (2 * half == d && d == 64) return go(qkv_norm_rope_kernel<2>);
  if (2 * half == d && d == 128) return go(qkv_norm_rope_kernel<4>);
  // the steps: copies, the norm kernel on q's and k's rows, the rope kernel
  const size_t row = static_cast<size_t>(H * d) * 2;
  for (int part = 0; part < 3; ++part) {
    Tensor& dst = part == 0 ? q : part == 1 ? k : v;
    TF_CUDA(cudaMemcpy2DAsync(dst.data, row, static_cast<const uint8_t*>(qkv.data) + part * row, 3 * row, row, T,
                              cudaMemcpyDeviceToDevice, stream()));
  }
  Tensor q_rows = q.reshaped({T * H, d}), k_rows = k.reshaped({T * H, d});
  rms_norm_plain(q_rows, q_norm, eps, q_rows);
  rms_norm_plain(k_rows, k_norm, eps, k_rows);
  const SeqOffsets one = single_sequence(T);
  rope_split_half(q, cos, sin, one, q);
  rope_split_half(k, cos, sin, one, k);
}

}  // namespace tf::cuda
