// The fp32-class channel-major ops on CUDA: shapes to the raw launchers (channels_f32.h), workspaces
// from the runtime's pool.
#include "backend/attention/attention.h"
#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/elementwise/add.h"
#include "backend/norm/group_norm.h"

#include <cuda_bf16.h>

#include <string>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/channels_f32.h"
#include "backend/variants.h"
#include "core/error.h"

namespace tf::cuda {

namespace {

const __nv_bfloat16* bf(const Tensor& t) { return static_cast<const __nv_bfloat16*>(t.data); }

void require_aligned(const char* op, const char* arg, const Tensor& t) {
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    fail(std::string(op) + " (cuda): " + arg + " is not 16-byte aligned (" + t.describe() + ")");
}

// The kernels' view of a convolution of x [C, H, W] (read through a nearest 2x upsample when asked)
// by w [Co, C, kh, kw], its output size filled in.
ConvShape conv_shape(const Tensor& x, const Tensor& w, const Conv2dGeometry& g, bool upsample) {
  ConvShape s{int(x.dim(0)), int(x.dim(1)), int(x.dim(2)), upsample, int(w.dim(0)), int(w.dim(2)), int(w.dim(3)),
              g.stride, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, 0, 0};
  conv_output_size(s);
  if (g.prepared && g.prepared->form != kWeightsAsGiven && g.prepared->packed.device == Device::CUDA) {
    s.prepared = g.prepared->packed.ptr<const __nv_bfloat16>();
    s.prepared_form = g.prepared->form;
  }
  return s;
}

void run_conv(const char* op, bool upsample, const Tensor& x, const Tensor& w, const Tensor& bias,
              const Conv2dGeometry& g, Tensor& y, const Tensor* residual) {
  const ConvShape s = conv_shape(x, w, g, upsample);
  if (s.Ho != y.dim(1) || s.Wo != y.dim(2)) fail(std::string(op) + " (cuda): output size mismatch " + y.describe());
  if (y.numel() == 0) return;
  Tensor ws = empty(DType::U8, {int64_t(conv_workspace_bytes(s))}, Device::CUDA);
  launch_conv2d(x.ptr<float>(), bf(w), bf(bias), residual ? residual->ptr<float>() : nullptr, y.ptr<float>(), s,
                ws.data, stream());
}

}  // namespace

void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual) {
  run_conv("conv2d", false, x, w, bias, g, y, residual);
}

PreparedConvWeights prepare_conv2d_weights(const Tensor& w, const Conv2dGeometry& g, bool upsample, bool norm) {
  ConvShape s{int(w.dim(1)), 1, 1, upsample, int(w.dim(0)), int(w.dim(2)), int(w.dim(3)),
              g.stride, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, 0, 0};
  const int form = conv_weights_form(s, norm);
  if (form == kWeightsAsGiven) return {Tensor{}, form, w.data};
  Tensor packed = empty(DType::BF16, {int64_t(conv_weights_elems(s, form))}, Device::CUDA);
  launch_prepare_conv_weights(bf(w), s, form, packed.ptr<__nv_bfloat16>(), stream());
  return {packed, form, w.data};
}

void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y) {
  if (x.numel() == 0) return;
  require_aligned("group_norm", "x", x);
  require_aligned("group_norm", "y", y);
  const int C = int(x.dim(0));
  const int64_t HW = x.numel() / C;
  Tensor ws = empty(DType::U8, {int64_t(group_norm_workspace_bytes(C, HW, groups))}, Device::CUDA);
  launch_group_norm(x.ptr<float>(), bf(gamma), bf(beta), C, HW, groups, eps, silu, y.ptr<float>(), ws.data, stream());
}

void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual, const Conv1x1OfInput* beside) {
  const ConvShape s = conv_shape(x, w, g, false);
  const bool together = beside && beside->y->numel() > 0 && y.numel() > 0 &&
                        variant_is<Variant::conv_shortcut>("beside") && conv_beside_applies(s, int(beside->w->dim(0)));
  if (beside && !together) {  // x's split for the convolution beside made by its own pass
    cuda::conv2d(x, *beside->w, *beside->bias, kConvPointwise, *beside->y, nullptr);
    beside = nullptr;
  }
  if (x.numel() == 0 || y.numel() == 0 || !conv_folds_group_norm(s)) {
    Tensor t = empty(DType::F32, x.shape, Device::CUDA);
    cuda::group_norm(x, gamma, beta, groups, eps, silu, t);
    return cuda::conv2d(t, w, bias, g, y, residual);
  }
  require_aligned("group_norm_conv2d", "x", x);
  const int C = int(x.dim(0));
  const int64_t HW = x.numel() / C;
  Tensor gws = empty(DType::U8, {int64_t(group_norm_workspace_bytes(C, HW, groups))}, Device::CUDA);
  const GroupNormApply n =
      launch_group_norm_stats(x.ptr<float>(), bf(gamma), bf(beta), C, HW, groups, eps, silu, gws.data, stream());
  Tensor ws = empty(DType::U8, {int64_t(beside ? conv_beside_workspace_bytes(s) : conv_workspace_bytes(s))}, Device::CUDA);
  const Conv1x1Beside b = beside ? Conv1x1Beside{bf(*beside->w), bf(*beside->bias), beside->y->ptr<float>(),
                                                 int(beside->w->dim(0))}
                                 : Conv1x1Beside{};
  launch_group_norm_conv2d(x.ptr<float>(), n, bf(w), bf(bias), residual ? residual->ptr<float>() : nullptr,
                           y.ptr<float>(), s, ws.data, stream(), beside ? &b : nullptr);
}

void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual) {
  run_conv("upsample_nearest2x_conv2d", true, x, w, bias, g, y, residual);
}

void upsample_nearest2x(const Tensor& x, Tensor& y) {
  if (x.numel() == 0) return;
  require_aligned("upsample_nearest2x", "y", y);
  launch_upsample_nearest2x(x.ptr<float>(), int(x.dim(0)), int(x.dim(1)), int(x.dim(2)), y.ptr<float>(), stream());
}

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  launch_add(a.ptr<float>(), b.ptr<float>(), a.numel(), y.ptr<float>(), stream());
}

void attention_f32_channels(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o) {
  const int D = int(q.dim(0)), N = int(q.dim(1));
  if (int64_t(N) != q.dim(1)) fail("attention (channels, cuda): too many positions");
  Tensor ws = empty(DType::F32, {int64_t(attention_workspace_floats(D, N))}, Device::CUDA);
  launch_attention_single_head(q.ptr<float>(), k.ptr<float>(), v.ptr<float>(), D, N, scale, o.ptr<float>(),
                               ws.ptr<float>(), stream());
}

}  // namespace tf::cuda
