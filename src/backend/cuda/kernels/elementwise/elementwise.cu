// Element-wise CUDA kernels and copies: embedding gather, residual add, the MLP's and attention's
// gated products, the query/gate split.
#include <string>
#include <vector>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/primitives/dependent_launch.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/attention/split_query_gate.h"
#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/sigmoid_gate.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/embed/embedding.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

// A row per block; an id outside [0, vocab) gives a zero row (the host check may be the caller's).
__global__ void embedding_kernel(const uint16_t* table, const int32_t* ids, uint16_t* out, int64_t vocab,
                                 int64_t hidden) {
  int64_t t = blockIdx.x;
  const int32_t id = ids[t];
  uint16_t* dst = out + t * hidden;
  if (id < 0 || id >= vocab) {
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = 0;
    return;
  }
  const uint16_t* src = table + static_cast<int64_t>(id) * hidden;
  if (hidden % 8 == 0) {
    for (int64_t i = threadIdx.x; i < hidden / 8; i += blockDim.x)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else {
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = src[i];
  }
}

// y[i] = op(a[i], b[i]) over bf16 values, V per thread (8: one 16-byte access per operand).
template <int V, class Op>
__global__ void binary_map_kernel(const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n, Op op) {
  allow_dependent_launch();  // a weight-streaming product after this one asks for its first weights now
  const int64_t i = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) * V;
  if (i >= n) return;
  float x[V], z[V], r[V];
  ld_bf16x<V>(a + i, x);
  ld_bf16x<V>(b + i, z);
#pragma unroll
  for (int e = 0; e < V; ++e) r[e] = op(x[e], z[e]);
  st_bf16x<V>(y + i, r);
}

// h[i] = bf16(h[i] + bf16(sum of d's shares at i)), V per thread (8: 16-byte h, two 16-byte reads a share).
template <int V>
__global__ void residual_add_shares_kernel(uint16_t* h, const float* d, int shares, int64_t n) {
  const int64_t i = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) * V;
  if (i >= n) return;
  float x[V], e[V];
  ld_bf16x<V>(h + i, x);
  ld_share_sums_bf16<V>(d + i, shares, n, e);
#pragma unroll
  for (int k = 0; k < V; ++k) x[k] = x[k] + e[k];
  st_bf16x<V>(h + i, x);
}

struct Add {
  __device__ float operator()(float h, float d) const { return h + d; }
};
struct SiluGatedProduct {  // bf16(silu(g)) * u
  __device__ float operator()(float g, float u) const { return silu_gated(g, u); }
};
struct SigmoidGate {  // x * bf16(sigmoid(g))
  __device__ float operator()(float x, float g) const { return x * round_bf16(sigmoid32(g)); }
};

template <class Op>
void binary_map(const char* name, const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n, Op op) {
  if (n == 0) return;
  if (bf16x8_ok(n, {a, b, y}))
    binary_map_kernel<8><<<blocks_for(n / 8, kThreads), kThreads, 0, stream()>>>(a, b, y, n, op);
  else
    binary_map_kernel<1><<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(a, b, y, n, op);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fail_cuda(err, (std::string("launch of ") + name).c_str(), __FILE__, __LINE__);
}

// qg [rows, 2d] -> query [rows, d], gate [rows, d], V values per thread
template <int V>
__global__ void split_query_gate_kernel(const uint16_t* qg, uint16_t* q, uint16_t* g, int64_t rows, int64_t d) {
  const int64_t i = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) * V;
  if (i >= rows * d) return;
  const int64_t r = i / d, c = i % d;
  if constexpr (V == 8) {
    *reinterpret_cast<uint4*>(q + i) = *reinterpret_cast<const uint4*>(qg + r * 2 * d + c);
    *reinterpret_cast<uint4*>(g + i) = *reinterpret_cast<const uint4*>(qg + r * 2 * d + d + c);
  } else {
    q[i] = qg[r * 2 * d + c];
    g[i] = qg[r * 2 * d + d + c];
  }
}

const uint16_t* bits(const Tensor& t) { return static_cast<const uint16_t*>(t.data); }
uint16_t* bits_mut(Tensor& t) { return static_cast<uint16_t*>(t.data); }

}  // namespace

void embedding(const Tensor& table, const Tensor& ids, Tensor& out, IdCheck check) {
  int64_t vocab = table.dim(0), hidden = table.dim(1), n = ids.dim(0);
  if (n == 0) return;
  if (check == IdCheck::by_op) {
    // ids are few: check them on the host so a bad id is an error
    std::vector<int32_t> host(n);
    TF_CUDA(cudaMemcpyAsync(host.data(), ids.data, n * sizeof(int32_t), cudaMemcpyDeviceToHost, stream()));
    TF_CUDA(cudaStreamSynchronize(stream()));
    for (int64_t t = 0; t < n; ++t)
      if (host[t] < 0 || host[t] >= vocab)
        fail("embedding: token id " + std::to_string(host[t]) + " at position " + std::to_string(t) +
             " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  }
  embedding_kernel<<<static_cast<unsigned>(n), 128, 0, stream()>>>(bits(table), ids.ptr<int32_t>(), bits_mut(out),
                                                                   vocab, hidden);
  TF_CUDA_LAUNCH("embedding_kernel");
}

void residual_add(Tensor& h, const Tensor& d) {
  if (d.dtype == DType::F32) {
    const int64_t n = h.numel();
    if (n == 0) return;
    const int shares = static_cast<int>(d.dim(0));
    if (bf16x8_ok(n, {h.data}) && reinterpret_cast<uintptr_t>(d.data) % 16 == 0)
      residual_add_shares_kernel<8><<<blocks_for(n / 8, kThreads), kThreads, 0, stream()>>>(bits_mut(h), d.ptr<float>(),
                                                                                          shares, n);
    else
      residual_add_shares_kernel<1><<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(bits_mut(h), d.ptr<float>(),
                                                                                      shares, n);
    TF_CUDA_LAUNCH("residual_add_shares_kernel");
    return;
  }
  binary_map("residual_add_kernel", bits(h), bits(d), bits_mut(h), h.numel(), Add{});
}

void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y) {
  binary_map("silu_gated_product_kernel", bits(gate), bits(up), bits_mut(y), gate.numel(), SiluGatedProduct{});
}

void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y) {
  binary_map("sigmoid_gate_kernel", bits(x), bits(gate), bits_mut(y), x.numel(), SigmoidGate{});
}

void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate) {
  int64_t rows = query.dim(0) * query.dim(1), d = query.dim(2), n = rows * d;
  if (n == 0) return;
  if (bf16x8_ok(d, {qg.data, query.data, gate.data}))
    split_query_gate_kernel<8><<<blocks_for(n / 8, kThreads), kThreads, 0, stream()>>>(bits(qg), bits_mut(query),
                                                                                      bits_mut(gate), rows, d);
  else
    split_query_gate_kernel<1><<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(bits(qg), bits_mut(query),
                                                                                   bits_mut(gate), rows, d);
  TF_CUDA_LAUNCH("split_query_gate_kernel");
}

}  // namespace tf::cuda
