// Element-wise CUDA kernels and copies: embedding gather, residual add, the MLP's and attention's
// gated products, the query/gate split.
#include <string>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/transformer_ops.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void embedding_kernel(const uint16_t* table, const int32_t* ids, uint16_t* out, int64_t hidden) {
  int64_t t = blockIdx.x;
  const uint16_t* src = table + static_cast<int64_t>(ids[t]) * hidden;
  uint16_t* dst = out + t * hidden;
  if (hidden % 8 == 0) {
    for (int64_t i = threadIdx.x; i < hidden / 8; i += blockDim.x)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else {
    for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = src[i];
  }
}

__global__ void residual_add_kernel(uint16_t* h, const uint16_t* d, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) h[i] = st_bf16(ld_bf16(h, i) + ld_bf16(d, i));
}

__global__ void silu_gated_product_kernel(const uint16_t* g, const uint16_t* u, uint16_t* y, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = st_bf16(round_bf16(silu32(ld_bf16(g, i))) * ld_bf16(u, i));
}

__global__ void sigmoid_gate_kernel(const uint16_t* x, const uint16_t* g, uint16_t* y, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = st_bf16(ld_bf16(x, i) * round_bf16(sigmoid32(ld_bf16(g, i))));
}

// qg [rows, 2d] -> query [rows, d], gate [rows, d]
__global__ void split_query_gate_kernel(const uint16_t* qg, uint16_t* q, uint16_t* g, int64_t rows, int64_t d) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= rows * d) return;
  int64_t r = i / d, c = i % d;
  q[i] = qg[r * 2 * d + c];
  g[i] = qg[r * 2 * d + d + c];
}

const uint16_t* bits(const Tensor& t) { return static_cast<const uint16_t*>(t.data); }
uint16_t* bits_mut(Tensor& t) { return static_cast<uint16_t*>(t.data); }

}  // namespace

void embedding(const Tensor& table, const Tensor& ids, Tensor& out) {
  int64_t vocab = table.dim(0), hidden = table.dim(1), n = ids.dim(0);
  if (n == 0) return;
  // ids are few: check them on the host so a bad id is an error, never a wild read
  std::vector<int32_t> host(n);
  TF_CUDA(cudaMemcpyAsync(host.data(), ids.data, n * sizeof(int32_t), cudaMemcpyDeviceToHost, stream()));
  TF_CUDA(cudaStreamSynchronize(stream()));
  for (int64_t t = 0; t < n; ++t)
    if (host[t] < 0 || host[t] >= vocab)
      fail("embedding: token id " + std::to_string(host[t]) + " at position " + std::to_string(t) +
           " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  embedding_kernel<<<static_cast<unsigned>(n), 128, 0, stream()>>>(bits(table), ids.ptr<int32_t>(), bits_mut(out),
                                                                   hidden);
  TF_CUDA_LAUNCH("embedding_kernel");
}

void residual_add(Tensor& h, const Tensor& d) {
  int64_t n = h.numel();
  if (n == 0) return;
  residual_add_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(bits_mut(h), bits(d), n);
  TF_CUDA_LAUNCH("residual_add_kernel");
}

void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y) {
  int64_t n = gate.numel();
  if (n == 0) return;
  silu_gated_product_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(bits(gate), bits(up), bits_mut(y), n);
  TF_CUDA_LAUNCH("silu_gated_product_kernel");
}

void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y) {
  int64_t n = x.numel();
  if (n == 0) return;
  sigmoid_gate_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(bits(x), bits(gate), bits_mut(y), n);
  TF_CUDA_LAUNCH("sigmoid_gate_kernel");
}

void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate) {
  int64_t rows = query.dim(0) * query.dim(1), d = query.dim(2);
  if (rows * d == 0) return;
  split_query_gate_kernel<<<blocks_for(rows * d, kThreads), kThreads, 0, stream()>>>(bits(qg), bits_mut(query),
                                                                                      bits_mut(gate), rows, d);
  TF_CUDA_LAUNCH("split_query_gate_kernel");
}

}  // namespace tf::cuda
