// Element-wise CUDA kernels of diffusion transformers (backend/cpu/modulation.cpp's ops): adaptive
// modulation, the gated residual add, SiLU and SiTU's gated product, each step rounded where the
// reference's bf16 tensors round. Row vectors (shift, scale, gate) are indexed by the column.
#include <mutex>
#include <string>

#include "backend/cuda/kernels/elementwise/situ_tables.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/elementwise/modulate.h"
#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/silu.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/variants.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

// y[i] = op(a[i], b[i], c0[i % d], c1[i % d]) over bf16, V per thread (V divides d where V > 1).
template <int V, class Op>
__global__ void row_vector_map_kernel(const uint16_t* a, const uint16_t* b, const uint16_t* c0, const uint16_t* c1,
                                      uint16_t* y, int64_t n, int64_t d, Op op) {
  const int64_t i = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) * V;
  if (i >= n) return;
  const int64_t col = i % d;
  float x[V], z[V], u[V], w[V], r[V];
  ld_bf16x<V>(a + i, x);
  if (b) ld_bf16x<V>(b + i, z);
  if (c0) ld_bf16x<V>(c0 + col, u);
  if (c1) ld_bf16x<V>(c1 + col, w);
#pragma unroll
  for (int e = 0; e < V; ++e) r[e] = op(x[e], b ? z[e] : 0.0f, c0 ? u[e] : 0.0f, c1 ? w[e] : 0.0f);
  st_bf16x<V>(y + i, r);
}

struct Modulate {  // bf16(x * bf16(1 + scale)) + shift
  __device__ float operator()(float x, float, float shift, float scale) const {
    return round_bf16(x * round_bf16(1.0f + scale)) + shift;
  }
};
struct GatedResidual {  // h + d * gate, rounded once by the store (no fma: the CPU's bytes)
  __device__ float operator()(float h, float d, float gate, float) const { return __fadd_rn(h, __fmul_rn(d, gate)); }
};
struct Silu {
  __device__ float operator()(float x, float, float, float) const { return silu32(x); }
};
// SiTU's two factors in fp32, unrounded: a = (4 tanh(g / 4)) sigmoid(g) of the gate, b = 25 tanh(u / 25)
// of the up value (g / 4 is exact as g * 0.25; 1 / (1 + e) correctly rounded is the reciprocal's; no fma).
__device__ __forceinline__ float situ_gate_factor(float g) {
  return __fmul_rn(__fmul_rn(4.0f, tanhf(g * 0.25f)), __frcp_rn(__fadd_rn(1.0f, expf(-g))));
}
__device__ __forceinline__ float situ_up_factor(float u) { return __fmul_rn(25.0f, tanhf(__fdiv_rn(u, 25.0f))); }
struct SituGatedProduct {
  __device__ float operator()(float u, float g, float, float) const {
    return __fmul_rn(situ_gate_factor(g), situ_up_factor(u));
  }
};

// Each factor depends on one bf16 value: both tabulated for all 65,536 bit patterns by the functions
// above, so the product is two lookups and a multiply (the same bytes).
constexpr int kPatterns = kSituPatterns;

__global__ void situ_tables_kernel(float* gate_factor, float* up_factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kPatterns) return;
  const float x = bf16_bits_to_float(static_cast<uint16_t>(i));
  gate_factor[i] = situ_gate_factor(x);
  up_factor[i] = situ_up_factor(x);
}

__global__ void situ_lookup_kernel(const uint16_t* up, const uint16_t* gate, const float* __restrict__ gate_factor,
                                   const float* __restrict__ up_factor, uint16_t* y, int64_t n) {
  const int64_t i = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) * 8;
  if (i >= n) return;
  const uint4 u = *reinterpret_cast<const uint4*>(up + i), g = *reinterpret_cast<const uint4*>(gate + i);
  const uint32_t uw[4] = {u.x, u.y, u.z, u.w}, gw[4] = {g.x, g.y, g.z, g.w};
  float r[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const uint16_t ub = static_cast<uint16_t>(uw[e / 2] >> (16 * (e % 2))), gb = static_cast<uint16_t>(gw[e / 2] >> (16 * (e % 2)));
    r[e] = __fmul_rn(__ldg(gate_factor + gb), __ldg(up_factor + ub));
  }
  st_bf16x<8>(y + i, r);
}

const uint16_t* bits(const Tensor* t) { return t ? static_cast<const uint16_t*>(t->data) : nullptr; }

template <class Op>
void row_vector_map(const char* name, const Tensor& a, const Tensor* b, const Tensor* c0, const Tensor* c1, Tensor& y,
                    int64_t d, Op op) {
  const int64_t n = y.numel();
  if (n == 0) return;
  uint16_t* yp = static_cast<uint16_t*>(y.data);
  if (d % 8 == 0 && bf16x8_ok(n, {a.data, b ? b->data : a.data, c0 ? c0->data : a.data, c1 ? c1->data : a.data, yp}))
    row_vector_map_kernel<8><<<blocks_for(n / 8, kThreads), kThreads, 0, stream()>>>(bits(&a), bits(b), bits(c0),
                                                                                    bits(c1), yp, n, d, op);
  else
    row_vector_map_kernel<1><<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(bits(&a), bits(b), bits(c0), bits(c1),
                                                                                yp, n, d, op);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fail_cuda(err, (std::string("launch of ") + name).c_str(), __FILE__, __LINE__);
}

}  // namespace

// Null while capturing before they exist: the formula's kernel runs instead.
const float* situ_tables() {
  static float* tables = nullptr;
  static std::mutex mu;
  std::lock_guard<std::mutex> l(mu);
  if (tables) return tables;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  TF_CUDA(cudaStreamIsCapturing(stream(), &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return nullptr;
  TF_CUDA(cudaMalloc(&tables, 2 * kPatterns * sizeof(float)));
  situ_tables_kernel<<<kPatterns / 256, 256, 0, stream()>>>(tables, tables + kPatterns);
  TF_CUDA_LAUNCH("situ_tables_kernel");
  return tables;
}

void modulate(const Tensor& x, const Tensor& shift, const Tensor& scale, Tensor& y) {
  row_vector_map("modulate_kernel", x, nullptr, &shift, &scale, y, x.dim(1), Modulate{});
}

void residual_add_gated(Tensor& h, const Tensor& d, const Tensor& gate) {
  row_vector_map("residual_add_gated_kernel", h, &d, &gate, nullptr, h, gate.dim(0), GatedResidual{});
}

void silu(const Tensor& x, Tensor& y) { row_vector_map("silu_kernel", x, nullptr, nullptr, nullptr, y, 8, Silu{}); }

void situ_gated_product(const Tensor& up, const Tensor& gate, Tensor& y) {
  const int64_t n = y.numel();
  const float* tables = variant_is<Variant::situ>("lookup") ? situ_tables() : nullptr;
  if (tables && bf16x8_ok(n, {up.data, gate.data, y.data})) {
    situ_lookup_kernel<<<blocks_for(n / 8, kThreads), kThreads, 0, stream()>>>(
        bits(&up), bits(&gate), tables, tables + kPatterns, static_cast<uint16_t*>(y.data), n);
    TF_CUDA_LAUNCH("situ_lookup_kernel");
    return;
  }
  row_vector_map("situ_gated_product_kernel", up, &gate, nullptr, nullptr, y, 8, SituGatedProduct{});
}

}  // namespace tf::cuda
