#include "families/flux2_vae/blocks.h"

#include <cmath>

#include "backend/attention/attention.h"
#include "backend/conv/conv2d.h"
#include "backend/norm/group_norm.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"

namespace tf::flux2_vae {

namespace {

// g with c's prepared weights where it has them.
Conv2dGeometry with_weights(const Conv& c, Conv2dGeometry g) {
  if (c.prepared.of) g.prepared = &c.prepared;
  return g;
}

Tensor conv(const Conv& c, const Tensor& x, const Conv2dGeometry& g, const Tensor* residual,
            GroupStats* y_stats = nullptr) {
  const int kh = static_cast<int>(c.w.dim(2)), kw = static_cast<int>(c.w.dim(3));
  const int64_t ho = conv2d_out_extent(x.dim(1), kh, g.stride, g.pad_top, g.pad_bottom);
  const int64_t wo = conv2d_out_extent(x.dim(2), kw, g.stride, g.pad_left, g.pad_right);
  Tensor y = empty(DType::F32, {c.w.dim(0), ho, wo}, x.device);
  conv2d(x, c.w, c.b, with_weights(c, g), y, residual, y_stats);
  return y;
}

}  // namespace

Tensor conv3x3(const Conv& c, const Tensor& x, const Tensor* residual, GroupStats* y_stats) {
  return conv(c, x, kConvSame3x3, residual, y_stats);
}
Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual, GroupStats* y_stats) {
  return conv(c, x, kConvPointwise, residual, y_stats);
}

Tensor norm_conv3x3(const Norm& n, const Conv& c, const Tensor& x, int groups, float eps, const Tensor* residual,
                    const Conv1x1OfInput* beside, const GroupStats* x_stats, GroupStats* y_stats) {
  Tensor y = empty(DType::F32, {c.w.dim(0), x.dim(1), x.dim(2)}, x.device);
  group_norm_conv2d(x, n.gamma, n.beta, groups, eps, true, c.w, c.b, with_weights(c, kConvSame3x3), y, residual,
                    beside, x_stats, y_stats);
  return y;
}

Tensor norm(const Norm& n, const Tensor& x, int groups, float eps, bool silu, const GroupStats* x_stats) {
  Tensor y = empty(DType::F32, x.shape, x.device);
  group_norm(x, n.gamma, n.beta, groups, eps, silu, y, x_stats);
  return y;
}

Tensor resnet(const Resnet& r, const Tensor& x, int groups, float eps, const GroupStats* x_stats,
              GroupStats* y_stats) {
  GroupStats h_stats = make_group_stats(groups, eps, x.device);  // conv1's output's, for norm2
  if (!r.has_shortcut) {
    const Tensor h = norm_conv3x3(r.norm1, r.conv1, x, groups, eps, nullptr, nullptr, x_stats, &h_stats);
    return norm_conv3x3(r.norm2, r.conv2, h, groups, eps, &x, nullptr, &h_stats, y_stats);
  }
  // the shortcut beside conv1, so a backend may split x once for both
  Tensor s = empty(DType::F32, {r.shortcut.w.dim(0), x.dim(1), x.dim(2)}, x.device);
  const Conv1x1OfInput shortcut{&r.shortcut.w, &r.shortcut.b, &s};
  const Tensor h = norm_conv3x3(r.norm1, r.conv1, x, groups, eps, nullptr, &shortcut, x_stats, &h_stats);
  return norm_conv3x3(r.norm2, r.conv2, h, groups, eps, &s, nullptr, &h_stats, y_stats);
}

Tensor resnets(const std::vector<Resnet>& rs, const Tensor& x, int groups, float eps, const GroupStats* x_stats,
               GroupStats* y_stats) {
  if (rs.empty()) {
    if (y_stats) group_stats(x, *y_stats);
    return x;
  }
  Tensor h = x;
  GroupStats given, taken;  // the input's statistics (x_stats for the first), the output's
  for (size_t i = 0; i < rs.size(); ++i) {
    const bool last = i + 1 == rs.size();
    if (!last) taken = make_group_stats(groups, eps, x.device);
    h = resnet(rs[i], h, groups, eps, i > 0 ? &given : x_stats, last ? y_stats : &taken);
    if (!last) given = std::move(taken);
  }
  return h;
}

Tensor downsample(const Conv& c, const Tensor& x, GroupStats* y_stats) {
  return conv(c, x, kConvDownsample3x3, nullptr, y_stats);
}

Tensor upsample(const Conv& c, const Tensor& x, GroupStats* y_stats) {
  Tensor y = empty(DType::F32, {c.w.dim(0), 2 * x.dim(1), 2 * x.dim(2)}, x.device);
  upsample_nearest2x_conv2d(x, c.w, c.b, with_weights(c, kConvSame3x3), y, nullptr, y_stats);
  return y;
}

Tensor attention(const Attention& a, const Tensor& x, int groups, float eps, const GroupStats* x_stats,
                 GroupStats* y_stats) {
  const int64_t c = x.dim(0), n = x.dim(1) * x.dim(2);
  const Tensor t = norm(a.norm, x, groups, eps, false, x_stats);
  const Tensor q = conv1x1(a.q, t), k = conv1x1(a.k, t), v = conv1x1(a.v, t);  // [C, H, W]
  Tensor o = empty(DType::F32, {c, n}, x.device);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c)));  // head dim = C
  tf::attention(q.reshaped({c, n}), k.reshaped({c, n}), v.reshaped({c, n}), {.scale = scale, .mask = AttentionMask::none, .layout = AttentionLayout::channels}, o);
  return conv1x1(a.out, o.reshaped(x.shape), &x, y_stats);
}

Tensor mid_block(const MidBlock& m, const Tensor& x, int groups, float eps, const GroupStats* x_stats,
                 GroupStats* y_stats) {
  GroupStats first = make_group_stats(groups, eps, x.device), second = make_group_stats(groups, eps, x.device);
  Tensor h = resnet(m.first, x, groups, eps, x_stats, &first);
  if (!m.has_attention) return resnet(m.second, h, groups, eps, &first, y_stats);
  h = attention(m.attention, h, groups, eps, &first, &second);
  return resnet(m.second, h, groups, eps, &second, y_stats);
}

}  // namespace tf::flux2_vae
