#pragma once
// Depthwise causal convolution over time then SiLU, as Qwen3.5's DeltaNet (causal_conv1d_fn path):
//   c = bf16(sum_j float(w[ch, j]) * float(x[t - K + 1 + j, ch]))  (fp32 sum over j = 0..K-1 in order;
//        positions before the sequence start are zero)
//   y = bf16(silu(float(c)))                                        (silu(x) = x / (1 + exp(-x)))
// Packed sequences never see each other's tokens.
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// x: BF16 [tokens, channels]; w: BF16 [channels, 1, K]; y: BF16 [tokens, channels] (must not alias x).
void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y);
}  // namespace cpu
namespace cuda {
void causal_conv1d_silu(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets, Tensor& y);
}  // namespace cuda

}  // namespace tf
