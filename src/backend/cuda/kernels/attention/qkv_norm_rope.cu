// qkv_norm_rope on CUDA: half a warp a (token, q|k|v, head) row of d = 128, lane l holding elements
// 8 l .. 8 l + 7 (16-byte accesses); the norm's sum is each lane's eight in order, then a butterfly;
// RoPE over the whole head pairs lanes l and l ^ 8. One token a block. Other geometry runs the steps' kernels.
#include "backend/attention/qkv_norm_rope.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"

namespace tf::cuda {

namespace {

constexpr int kBlock = 128;

// One token a block: 8 half-warps take its 3 H rows of d = 128 in turn, lane l of a row holding
// elements 8 l .. 8 l + 7; the token's RoPE row and both norm weights are read once a thread and the
// row's place needs no 64-bit division (the index math was most of the per-row work).
__global__ void __launch_bounds__(kBlock) qkv_norm_rope_kernel(const uint16_t* qkv, const uint16_t* q_norm,
                                                               const uint16_t* k_norm, float eps, const uint16_t* cos,
                                                               const uint16_t* sin, uint16_t* q, uint16_t* k,
                                                               uint16_t* v, int H) {
  constexpr int V = 8, d = 16 * V, half = d / 2, kHalfWarps = kBlock / 16;
  const int64_t t = blockIdx.x;
  const int lane = threadIdx.x % 16, hw = threadIdx.x / 16;
  const int i0 = V * lane, f = i0 < half ? i0 : i0 - half;
  float wq[V], wk[V], c[V], s[V];
  ld_bf16x<V>(q_norm + i0, wq);
  ld_bf16x<V>(k_norm + i0, wk);
  ld_bf16x<V>(cos + t * half + f, c);
  ld_bf16x<V>(sin + t * half + f, s);
  const int rows = 3 * H;
  // every half-warp runs the same trip count: a dead one still joins its warp's shuffles
  for (int r0 = 0; r0 < rows; r0 += kHalfWarps) {
    const int row = r0 + hw;
    const bool live = row < rows;
    const int rr = live ? row : 0, part = rr / H, h = rr - part * H;
    const uint16_t* src = qkv + (t * rows + rr) * d + i0;
    uint16_t* dst = (part == 0 ? q : part == 1 ? k : v) + (t * H + h) * d + i0;
    float x[V];
    ld_bf16x<V>(src, x);
    float ss = 0.0f;
#pragma unroll
    for (int n = 0; n < V; ++n) ss = ss + x[n] * x[n];
    ss = group_sum<16>(ss);
    const float rs = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
    float y[V];
#pragma unroll
    for (int n = 0; n < V; ++n) y[n] = round_bf16(round_bf16(x[n] * rs) * (part == 1 ? wk[n] : wq[n]));
    // RoPE over the whole head: element i pairs with i -+ d / 2, the same slot of lane -+ 8
#pragma unroll
    for (int n = 0; n < V; ++n) {
      const float other = __shfl_xor_sync(0xffffffffu, y[n], 8);
      y[n] = round_bf16(y[n] * c[n]) + round_bf16((i0 < half ? -other : other) * s[n]);
    }
    if (live) st_bf16x<V>(dst, part == 2 ? x : y);
  }
}

}  // namespace

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2), half = cos.dim(1);
  if (T == 0 || H == 0) return;
  auto bits = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data); };
  auto out = [](Tensor& t) { return static_cast<uint16_t*>(t.data); };
  const bool aligned = bf16x8_ok(8, {qkv.data, q.data, k.data, v.data, q_norm.data, k_norm.data, cos.data, sin.data});
  if (aligned && 2 * half == d && d == 128 && T < (int64_t(1) << 31) && 3 * H < (int64_t(1) << 30)) {
    qkv_norm_rope_kernel<<<unsigned(T), kBlock, 0, stream()>>>(bits(qkv), bits(q_norm), bits(k_norm), eps, bits(cos),
                                                               bits(sin), out(q), out(k), out(v), static_cast<int>(H));
    TF_CUDA_LAUNCH("qkv_norm_rope_kernel");
    return;
  }
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
