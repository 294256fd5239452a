// qkv_norm_rope on CUDA: half a warp a (token, q|k|v, head) row of d = 128, lane l holding elements
// 8 l .. 8 l + 7 (16-byte accesses); the norm's sum is each lane's eight in order, then a butterfly;
// RoPE over the whole head pairs lanes l and l ^ 8. One token a block. Other head sizes: a warp a row.
#include "backend/attention/qkv_norm_rope.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"

namespace tf::cuda {

namespace {

constexpr int kBlock = 128;

// y = bf16(n c + rot s), each step an fp32 rounding (no contraction into a fused multiply-add).
__device__ __forceinline__ float turned(float n, float rot, float c, float s) {
  return __fadd_rn(__fmul_rn(n, c), __fmul_rn(rot, s));
}

// One token a block: 8 half-warps take its 3 H rows of d = 128 in turn, lane l of a row holding
// elements 8 l .. 8 l + 7; the token's RoPE row and both norm weights are read once a thread and the
// row's place needs no 64-bit division (the index math was most of the per-row work).
__global__ void __launch_bounds__(kBlock) qkv_norm_rope_kernel(const uint16_t* qkv, const uint16_t* q_norm,
                                                               const uint16_t* k_norm, float eps, const float* cos,
                                                               const float* sin, uint16_t* q, uint16_t* k,
                                                               uint16_t* v, int H) {
  constexpr int V = 8, d = 16 * V, half = d / 2, kHalfWarps = kBlock / 16;
  const int64_t t = blockIdx.x;
  const int lane = threadIdx.x % 16, hw = threadIdx.x / 16;
  const int i0 = V * lane, f = i0 < half ? i0 : i0 - half;
  float wq[V], wk[V], c[V], s[V];
  ld_bf16x<V>(q_norm + i0, wq);
  ld_bf16x<V>(k_norm + i0, wk);
#pragma unroll
  for (int n = 0; n < V; n += 4) {
    const float4 cv = *reinterpret_cast<const float4*>(cos + t * half + f + n);
    const float4 sv = *reinterpret_cast<const float4*>(sin + t * half + f + n);
    c[n] = cv.x, c[n + 1] = cv.y, c[n + 2] = cv.z, c[n + 3] = cv.w;
    s[n] = sv.x, s[n + 1] = sv.y, s[n + 2] = sv.z, s[n + 3] = sv.w;
  }
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
    for (int n = 0; n < V; ++n) ss = __fadd_rn(ss, __fmul_rn(x[n], x[n]));
    ss = group_sum<16>(ss);
    const float rs = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
    float y[V];
#pragma unroll
    for (int n = 0; n < V; ++n) y[n] = __fmul_rn(__fmul_rn(x[n], rs), part == 1 ? wk[n] : wq[n]);
    // RoPE over the whole head: element i pairs with i -+ d / 2, the same slot of lane -+ 8
#pragma unroll
    for (int n = 0; n < V; ++n) {
      const float other = __shfl_xor_sync(0xffffffffu, y[n], 8);
      y[n] = turned(y[n], i0 < half ? -other : other, c[n], s[n]);
    }
    if (live) st_bf16x<V>(dst, part == 2 ? x : y);
  }
}

// Any even d: a warp a (token, q|k|v, head) row, lane l taking elements l, l + 32, ... of each half
// (so both of a pair); blockIdx.x the token, the warps of the block its 3 H rows in turn.
__global__ void __launch_bounds__(kBlock) qkv_norm_rope_rows_kernel(const uint16_t* qkv, const uint16_t* q_norm,
                                                                    const uint16_t* k_norm, float eps, const float* cos,
                                                                    const float* sin, uint16_t* q, uint16_t* k,
                                                                    uint16_t* v, int H, int d) {
  const int64_t t = blockIdx.x;
  const int lane = threadIdx.x % 32, half = d / 2, rows = 3 * H;
  for (int row = threadIdx.x / 32; row < rows; row += kBlock / 32) {
    const int part = row / H, h = row - part * H;
    const uint16_t* x = qkv + (t * rows + row) * int64_t(d);
    uint16_t* dst = (part == 0 ? q : part == 1 ? k : v) + (t * H + h) * int64_t(d);
    if (part == 2) {
      for (int i = lane; i < d; i += 32) dst[i] = x[i];
      continue;
    }
    float ss = 0.0f;
    for (int i = lane; i < d; i += 32) ss = __fadd_rn(ss, __fmul_rn(ld_bf16(x, i), ld_bf16(x, i)));
    ss = group_sum<32>(ss);
    const float rs = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
    const uint16_t* w = part == 0 ? q_norm : k_norm;
    for (int j = lane; j < half; j += 32) {
      const float a = __fmul_rn(__fmul_rn(ld_bf16(x, j), rs), ld_bf16(w, j));
      const float b = __fmul_rn(__fmul_rn(ld_bf16(x, j + half), rs), ld_bf16(w, j + half));
      const float c = cos[t * half + j], s = sin[t * half + j];
      dst[j] = st_bf16(turned(a, -b, c, s));
      dst[j + half] = st_bf16(turned(b, a, c, s));
    }
  }
}

}  // namespace

void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t T = q.dim(0), H = q.dim(1), d = q.dim(2);
  if (T == 0 || H == 0) return;
  auto bits = [](const Tensor& t) { return static_cast<const uint16_t*>(t.data); };
  auto out = [](Tensor& t) { return static_cast<uint16_t*>(t.data); };
  const float *c = cos.ptr<const float>(), *s = sin.ptr<const float>();
  require(T < (int64_t(1) << 31) && 3 * H < (int64_t(1) << 30) && d < (int64_t(1) << 30),
          "qkv_norm_rope: " + q.describe() + " is past the CUDA kernel's index range");
  const bool aligned = bf16x8_ok(8, {qkv.data, q.data, k.data, v.data, q_norm.data, k_norm.data, cos.data, sin.data});
  if (aligned && d == 128) {
    qkv_norm_rope_kernel<<<unsigned(T), kBlock, 0, stream()>>>(bits(qkv), bits(q_norm), bits(k_norm), eps, c, s, out(q),
                                                               out(k), out(v), static_cast<int>(H));
    TF_CUDA_LAUNCH("qkv_norm_rope_kernel");
    return;
  }
  qkv_norm_rope_rows_kernel<<<unsigned(T), kBlock, 0, stream()>>>(bits(qkv), bits(q_norm), bits(k_norm), eps, c, s,
                                                                  out(q), out(k), out(v), static_cast<int>(H),
                                                                  static_cast<int>(d));
  TF_CUDA_LAUNCH("qkv_norm_rope_rows_kernel");
}

}  // namespace tf::cuda
