// The fp32-class channel-major ops on CUDA: shapes to the raw launchers (channels_f32.h), workspaces
// from the runtime's pool.
#include "backend/attention/attention.h"
#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/elementwise/add.h"
#include "backend/norm/group_norm.h"
#include "backend/norm/group_stats.h"

#include <cuda_bf16.h>

#include <string>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/channels_f32.h"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
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

double2* mean_rstd(const GroupStats& s) { return static_cast<double2*>(s.mean_rstd.data); }

// Room for the output rows' run summaries where the kernel of s takes them (conv_stats_tiles).
struct TileStats {
  Tensor room;
  int T = 0;
  gemm::TileStat* ptr() const { return T > 0 ? static_cast<gemm::TileStat*>(room.data) : nullptr; }
};
TileStats tile_stats_room(const ConvShape& s, bool norm, bool residual, const GroupStats* y_stats) {
  TileStats t;
  t.T = y_stats ? conv_stats_tiles(s, norm, residual) : 0;
  if (t.T > 0) t.room = empty(DType::U8, {int64_t(sizeof(gemm::TileStat)) * s.Co * t.T}, Device::CUDA);
  return t;
}

// y's statistics into y_stats: combined from the kernel's run summaries where it took them, else a pass over y.
void finish_stats(const Tensor& y, const TileStats& t, GroupStats* y_stats) {
  if (!y_stats) return;
  if (t.T == 0) return cuda::group_stats(y, *y_stats);
  const int C = int(y.dim(0));
  Tensor ws = empty(DType::U8, {int64_t(group_stats_of_tiles_workspace_bytes(C, t.T, y_stats->groups))}, Device::CUDA);
  launch_group_stats_of_tiles(t.ptr(), C, t.T, y.numel() / y_stats->groups, y_stats->groups, y_stats->eps,
                              mean_rstd(*y_stats), ws.data, stream());
}

void run_conv(const char* op, bool upsample, const Tensor& x, const Tensor& w, const Tensor& bias,
              const Conv2dGeometry& g, Tensor& y, const Tensor* residual, GroupStats* y_stats) {
  const ConvShape s = conv_shape(x, w, g, upsample);
  if (s.Ho != y.dim(1) || s.Wo != y.dim(2)) fail(std::string(op) + " (cuda): output size mismatch " + y.describe());
  if (y.numel() == 0) return finish_stats(y, {}, y_stats);
  Tensor ws = empty(DType::U8, {int64_t(conv_workspace_bytes(s))}, Device::CUDA);
  const TileStats t = tile_stats_room(s, false, residual != nullptr, y_stats);
  launch_conv2d(x.ptr<float>(), bf(w), bf(bias), residual ? residual->ptr<float>() : nullptr, y.ptr<float>(), s,
                ws.data, stream(), t.ptr());
  finish_stats(y, t, y_stats);
}

}  // namespace

void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual, GroupStats* y_stats) {
  run_conv("conv2d", false, x, w, bias, g, y, residual, y_stats);
}

void group_stats(const Tensor& x, GroupStats& s) {
  const int C = int(x.dim(0));
  const int64_t HW = x.numel() / std::max(C, 1);
  if (HW > 0) require_aligned("group_stats", "x", x);
  Tensor ws = empty(DType::U8, {int64_t(group_norm_workspace_bytes(C, HW, s.groups))}, Device::CUDA);
  launch_group_stats(x.ptr<float>(), C, HW, s.groups, s.eps, mean_rstd(s), ws.data, stream());
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
                Tensor& y, const GroupStats* x_stats) {
  if (x.numel() == 0) return;
  require_aligned("group_norm", "x", x);
  require_aligned("group_norm", "y", y);
  const int C = int(x.dim(0));
  const int64_t HW = x.numel() / C;
  if (x_stats)
    return launch_group_norm_apply(x.ptr<float>(), {mean_rstd(*x_stats), bf(gamma), bf(beta), C / groups, silu}, C,
                                   HW, y.ptr<float>(), stream());
  Tensor ws = empty(DType::U8, {int64_t(group_norm_workspace_bytes(C, HW, groups))}, Device::CUDA);
  launch_group_norm(x.ptr<float>(), bf(gamma), bf(beta), C, HW, groups, eps, silu, y.ptr<float>(), ws.data, stream());
}

void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual, const Conv1x1OfInput* beside, const GroupStats* x_stats,
                       GroupStats* y_stats) {
  const ConvShape s = conv_shape(x, w, g, false);
  const bool together = beside && beside->y->numel() > 0 && y.numel() > 0 &&
                        variant_is<Variant::conv_shortcut>("beside") && conv_beside_applies(s, int(beside->w->dim(0)));
  if (beside && !together) {  // x's split for the convolution beside made by its own pass
    cuda::conv2d(x, *beside->w, *beside->bias, kConvPointwise, *beside->y, nullptr);
    beside = nullptr;
  }
  if (x.numel() == 0 || y.numel() == 0 || !conv_folds_group_norm(s)) {
    Tensor t = empty(DType::F32, x.shape, Device::CUDA);
    cuda::group_norm(x, gamma, beta, groups, eps, silu, t, x_stats);
    return cuda::conv2d(t, w, bias, g, y, residual, y_stats);
  }
  require_aligned("group_norm_conv2d", "x", x);
  const int C = int(x.dim(0));
  const int64_t HW = x.numel() / C;
  Tensor gws = x_stats ? Tensor{} : empty(DType::U8, {int64_t(group_norm_workspace_bytes(C, HW, groups))}, Device::CUDA);
  const GroupNormApply n =
      x_stats ? GroupNormApply{mean_rstd(*x_stats), bf(gamma), bf(beta), C / groups, silu}
              : launch_group_norm_stats(x.ptr<float>(), bf(gamma), bf(beta), C, HW, groups, eps, silu, gws.data, stream());
  const TileStats t = tile_stats_room(s, true, residual != nullptr, y_stats);
  Tensor ws = empty(DType::U8, {int64_t(beside ? conv_beside_workspace_bytes(s) : conv_workspace_bytes(s))}, Device::CUDA);
  const Conv1x1Beside b = beside ? Conv1x1Beside{bf(*beside->w), bf(*beside->bias), beside->y->ptr<float>(),
                                                 int(beside->w->dim(0))}
                                 : Conv1x1Beside{};
  launch_group_norm_conv2d(x.ptr<float>(), n, bf(w), bf(bias), residual ? residual->ptr<float>() : nullptr,
                           y.ptr<float>(), s, ws.data, stream(), beside ? &b : nullptr, t.ptr());
  finish_stats(y, t, y_stats);
}

void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual, GroupStats* y_stats) {
  run_conv("upsample_nearest2x_conv2d", true, x, w, bias, g, y, residual, y_stats);
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
