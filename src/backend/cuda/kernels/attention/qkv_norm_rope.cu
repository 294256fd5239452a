// qkv_norm_rope on CUDA: half a warp a (token, q|k|v, head) row of d = 128, lane l holding elements
// 8 l .. 8 l + 7 (16-byte accesses); the norm's sum is each lane's eight in order, then a butterfly;
// RoPE over the whole head pairs lanes l and l ^ 8. Other geometry runs the steps' kernels.
#include "backend/attention/qkv_norm_rope.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"

namespace tf::cuda {

namespace {

constexpr int kBlock = 256;

// 16 lanes a row of d = 16 V (two rows a warp), lane l of the row holding elements V l .. V l + V - 1.
template <int V>
__global__ void qkv_norm_rope_kernel(const uint16_t* qkv, const uint16_t* q_norm, const uint16_t* k_norm, float eps,
                                     const uint16_t* cos, const uint16_t* sin, uint16_t* q, uint16_t* k, uint16_t* v,
                                     int64_t T, int H) {
  constexpr int d = 16 * V, half = d / 2;
  const int64_t row = blockIdx.x * int64_t(kBlock / 16) + threadIdx.x / 16;
  const int lane = threadIdx.x % 16;
  const bool live = row < T * 3 * H;  // a dead half-warp still joins its warp's shuffles
  const int64_t r = live ? row : 0, t = r / (3 * H);
  const int part = static_cast<int>((r / H) % 3), h = static_cast<int>(r % H);
  const int i0 = V * lane;
  const uint16_t* src = qkv + r * d + i0;
  uint16_t* dst = (part == 0 ? q : part == 1 ? k : v) + (t * H + h) * d + i0;
  float x[V], w[V], c[V], s[V];
  ld_bf16x<V>(src, x);
  const int f = i0 < half ? i0 : i0 - half;
  ld_bf16x<V>((part == 1 ? k_norm : q_norm) + i0, w);
  ld_bf16x<V>(cos + t * half + f, c);
  ld_bf16x<V>(sin + t * half + f, s);
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < V; ++n) ss = ss + x[n] * x[n];
  ss = group_sum<16>(ss);
  const float rs = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  float y[V];
#pragma unroll
  for (int n = 0; n < V; ++n) y[n] = round_bf16(round_bf16(x[n] * rs) * w[n]);
  // RoPE over the whole head: element i pairs with i -+ d / 2, the same slot of lane -+ 8
#pragma unroll
  for (int n = 0; n < V; ++n) {
    const float other = __shfl_xor_sync(0xffffffffu, y[n], 8);
    y[n] = round_bf16(y[n] * c[n]) + round_bf16((i0 < half ? -other : other) * s[n]);
  }
  if (live) st_bf16x<V>(dst, part == 2 ? x : y);
}

}  // namespace

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2), half = cos.dim(1);
  if (T == 0 || H == 0) return;
  auto bits = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data); };
  auto out = [](Tensor& t) { return static_cast<uint16_t*>(t.data); };
  const unsigned blocks = blocks_for(T * 3 * H, kBlock / 16);
  auto go = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream()>>>(bits(qkv), bits(q_norm), bits(k_norm), eps, bits(cos), bits(sin), out(q),
                                            out(k), out(v), T, static_cast<int>(H));
    TF_CUDA_LAUNCH("qkv_norm_rope_kernel");
  };
  const bool aligned = bf16x8_ok(8, {qkv.data, q.data, k.data, v.data, q_norm.data, k_norm.data, cos.data, sin.data});
  if (aligned && 2 * half == d && d == 128) return go(qkv_norm_rope_kernel<8>);
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
