#pragma once
// 2-D convolution (cross-correlation, as torch's Conv2d) of one channel-major picture with bias
// and an optional fused residual: y = residual + (bias + sum_k w * x).
// Numerics: every backend accumulates the products of the bf16 weight (exact in fp32) and the
// input in fp32, then adds the bias (bf16 -> fp32), then the residual, each one fp32 rounding.
// CPU: the fp32 input as is; each output is one sequential sum over k = (ci, ky, kx) in that order,
// each term a fused multiply-add (zero-padding terms included), started from 0 — the same bytes
// on every x86 ISA.
// CUDA: the bf16 tensor cores see each input as hi = bf16(x) plus lo = bf16(x - hi), about 16
// significant bits (|x - hi - lo| <= 2^-16 |x|); w * hi and w * lo are exact fp32 terms.
#include <initializer_list>

#include "backend/norm/group_stats.h"
#include "core/tensor.h"

namespace tf {

struct PreparedConvWeights;

// Zero padding on each side, and one stride for both axes.
// 3x3 "same": {1, 1,1,1,1}; the stride-2 downsample padded right and bottom only: {2, 0,0,1,1};
// 1x1: {1, 0,0,0,0}.
struct Conv2dGeometry {
  int stride = 1;
  int pad_top = 1, pad_left = 1, pad_bottom = 1, pad_right = 1;
  // w as the backend's kernels read it, made once (prepare_conv2d_weights), or null: each call reorders w
  const PreparedConvWeights* prepared = nullptr;
};
// The geometries above by name, for the callers that share them.
inline constexpr Conv2dGeometry kConvSame3x3{1, 1, 1, 1, 1};
inline constexpr Conv2dGeometry kConvDownsample3x3{2, 0, 0, 1, 1};
inline constexpr Conv2dGeometry kConvPointwise{1, 0, 0, 0, 0};

// A convolution's weights reordered once for a backend's kernels, so that no call reorders them (CUDA's TMA
// convolutions: tap-major with each tap's channels padded to 64, or a nearest 2x upsample's sub-pixel classes'
// summed weights): the same bytes as each call's own reordering. `form` is the backend's name for the layout;
// an op whose kernel needs another (a variant changed since) reorders per call, as without it.
struct PreparedConvWeights {
  Tensor packed;  // empty where the backend reads w as it is
  int form = 0;
  const void* of = nullptr;  // the weights' data it was made from
};
// w prepared for the op that will take it: conv2d (upsample false, norm false), group_norm_conv2d (norm true) or
// upsample_nearest2x_conv2d (upsample true), with g's stride and padding. On w's device.
PreparedConvWeights prepare_conv2d_weights(const Tensor& w, const Conv2dGeometry& g, bool upsample, bool norm);

// x: F32 [Ci, H, W]; w: BF16 [Co, Ci, kh, kw]; bias: BF16 [Co];
// y: F32 [Co, Ho, Wo] with Ho = (H + pad_top + pad_bottom - kh) / stride + 1 (likewise Wo),
// allocated by the caller on the same device; residual (optional): F32 [Co, Ho, Wo], may not alias y.
// y_stats (optional): y's GroupNorm statistics (group_stats.h), taken as y is written.
void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual = nullptr, GroupStats* y_stats = nullptr);

// The dispatcher's checks of conv2d's arguments (for ops that end in a convolution); throws naming op.
void check_conv2d(const char* op, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                  const Tensor& y, const Tensor* residual, const GroupStats* y_stats = nullptr);
// The one device of a convolution's tensors and its residual where given; throws naming op.
Device conv2d_device(const char* op, std::initializer_list<const Tensor*> ts, const Tensor* residual);

// The output extent of one axis.
inline int64_t conv2d_out_extent(int64_t in, int k, int stride, int pad_before, int pad_after) {
  return (in + pad_before + pad_after - k) / stride + 1;
}

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual, GroupStats* y_stats = nullptr);
}  // namespace cpu
namespace cuda {
void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual, GroupStats* y_stats = nullptr);
PreparedConvWeights prepare_conv2d_weights(const Tensor& w, const Conv2dGeometry& g, bool upsample, bool norm);
}  // namespace cuda

}  // namespace tf
