// Attention with a fused kernel's numerics on CUDA (backend/attention/attention.h, numerics fused),
// mask none: the wgmma kernel (attention_fused_wgmma.cuh) for head dims 64 and 128; else (causal, other
// head dims, TF_ATTENTION=mma) a warp-per-row kernel on the CUDA cores in the reference's two passes.
#include <cmath>
#include <string>

#include "backend/attention/attention.h"
#include "backend/cuda/kernels/attention/attention_fused_wgmma.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/runtime/tensor_map.h"
#include "backend/variants.h"

namespace tf::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // one warp a query row
constexpr int kMaxDims = 8;       // a lane's dims: head dims up to 256

// Row t's score against key j: the fp32 dot product (lane partials over dims lane + 32 u, a fixed
// butterfly), times the scale.
__device__ __forceinline__ float score(const float (&q)[kMaxDims], const uint16_t* krow, int d, int lane, float scale) {
  float dot = 0.0f;
#pragma unroll
  for (int u = 0; u < kMaxDims; ++u) {
    const int i = lane + 32 * u;
    if (i < d) dot = fmaf(q[u], ld_bf16(krow, i), dot);
  }
  return group_sum<32>(dot) * scale;
}

// grid: (ceil(T / kRowsPerBlock), heads). Pass 1: the row's max score m; pass 2: e = exp(s - m),
// l = sum e, o = sum e v (fp32, keys in order); o / l rounded once. CAUSAL: keys up to the row's own.
template <bool CAUSAL>
__global__ void attention_fused_rows_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v, float scale,
                                            SeqTable seqs, uint16_t* o, int64_t T, int Hq, int Hkv, int d) {
  const int64_t t = blockIdx.x * int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32, h = blockIdx.y, hk = h / (Hq / Hkv);
  if (t >= T) return;
  const int s = seq_of(seqs, static_cast<int>(t));
  const int64_t start = seqs.offsets[s], end = CAUSAL ? t + 1 : seqs.offsets[s + 1];
  float qv[kMaxDims];
#pragma unroll
  for (int u = 0; u < kMaxDims; ++u) {
    const int i = lane + 32 * u;
    qv[u] = i < d ? ld_bf16(q, (t * Hq + h) * d + i) : 0.0f;
  }
  float m = -INFINITY;
  for (int64_t j = start; j < end; ++j) m = fmaxf(m, score(qv, k + (j * Hkv + hk) * d, d, lane, scale));
  float l = 0.0f, acc[kMaxDims] = {};
  for (int64_t j = start; j < end; ++j) {
    const float e = expf(score(qv, k + (j * Hkv + hk) * d, d, lane, scale) - m);
    l = l + e;
    const uint16_t* vrow = v + (j * Hkv + hk) * d;
#pragma unroll
    for (int u = 0; u < kMaxDims; ++u) {
      const int i = lane + 32 * u;
      if (i < d) acc[u] = fmaf(e, ld_bf16(vrow, i), acc[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < kMaxDims; ++u) {
    const int i = lane + 32 * u;
    if (i < d) o[(t * Hq + h) * d + i] = st_bf16(__fdiv_rn(acc[u], l));
  }
}

template <int D>
void launch_wgmma(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqTable& seqs,
                  int64_t longest, Tensor& o) {
  namespace af = attention_fused;
  const int Hq = static_cast<int>(q.dim(1)), Hkv = static_cast<int>(k.dim(1));
  auto kernel = af::attention_kernel<D>;
  constexpr size_t smem = af::smem_bytes<D>();
  static bool raised = false;
  if (!raised) {
    TF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    raised = true;
  }
  // [tokens, heads, D] as {D, heads, tokens}, boxes of 64 columns x 1 head x 128 tokens
  auto map = [&](const char* what, const Tensor& t) {
    const uint64_t dims[3] = {uint64_t(D), uint64_t(t.dim(1)), uint64_t(t.dim(0))};
    const uint64_t strides[2] = {uint64_t(D) * 2, uint64_t(t.dim(1)) * D * 2};
    const uint32_t box[3] = {64, 1, uint32_t(af::kRows)}, ones[3] = {1, 1, 1};
    return bf16_tensor_map(what, t.data, 3, dims, strides, box, ones);
  };
  const CUtensorMap qmap = map("attention: queries", q), kmap = map("attention: keys", k),
                    vmap = map("attention: values", v);
  const dim3 grid(static_cast<unsigned>((longest + af::kRows - 1) / af::kRows), static_cast<unsigned>(Hq),
                  static_cast<unsigned>(seqs.count));
  const float scale_log2 = static_cast<float>(double(scale) * 1.4426950408889634);
  kernel<<<grid, af::kThreads, smem, stream()>>>(qmap, kmap, vmap, scale_log2, seqs, static_cast<uint16_t*>(o.data), Hq,
                                                  Hkv);
  TF_CUDA_LAUNCH("attention_fused::attention_kernel");
}

}  // namespace

namespace {

template <bool CAUSAL>
void attention_fused_on(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                     Tensor& o) {
  const int64_t T = q.dim(0);
  const int Hq = static_cast<int>(q.dim(1)), Hkv = static_cast<int>(k.dim(1)), d = static_cast<int>(q.dim(2));
  if (T == 0 || Hq == 0 || d == 0) return;
  if (d > 32 * kMaxDims)
    fail("attention: the CUDA kernel holds head dims up to " + std::to_string(32 * kMaxDims) + ", got " +
         std::to_string(d));
  const SeqTable seqs = make_seq_table("attention", seq_offsets);
  int64_t longest = 0;
  for (int s = 0; s < seqs.count; ++s) longest = std::max<int64_t>(longest, seqs.offsets[s + 1] - seqs.offsets[s]);
  if (!CAUSAL && variant_is<Variant::attention>("auto")) {
    if (d == 128) return launch_wgmma<128>(q, k, v, scale, seqs, longest, o);
    if (d == 64) return launch_wgmma<64>(q, k, v, scale, seqs, longest, o);
  }
  const dim3 grid(blocks_for(T, kRowsPerBlock), static_cast<unsigned>(Hq));
  attention_fused_rows_kernel<CAUSAL><<<grid, 32 * kRowsPerBlock, 0, stream()>>>(
      static_cast<const uint16_t*>(q.data), static_cast<const uint16_t*>(k.data), static_cast<const uint16_t*>(v.data),
      scale, seqs, static_cast<uint16_t*>(o.data), T, Hq, Hkv, d);
  TF_CUDA_LAUNCH("attention_fused_rows_kernel");
}

}  // namespace

void attention_fused_bidirectional(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                                   const SeqOffsets& seq_offsets, Tensor& o) {
  attention_fused_on<false>(q, k, v, scale, seq_offsets, o);
}

void attention_fused_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                            Tensor& o) {
  attention_fused_on<true>(q, k, v, scale, seq_offsets, o);
}

}  // namespace tf::cuda
