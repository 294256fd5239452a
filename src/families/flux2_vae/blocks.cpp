#include "families/flux2_vae/blocks.h"

#include <cmath>

#include "backend/attention/attention.h"
#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/group_norm.h"

namespace tf::flux2_vae {

namespace {

// Room for y's channel moments where asked, else an undefined tensor.
Tensor moments_for(const Tensor& y, bool moments) {
  return moments ? empty(DType::F64, {y.dim(0), 2}, y.device) : Tensor{};
}
Tensor* given(Tensor& m) { return m.data ? &m : nullptr; }
const Tensor* given(const Tensor& m) { return m.data ? &m : nullptr; }

Carried conv(const Conv& c, const Tensor& x, const Conv2dGeometry& g, const Tensor* residual, bool moments) {
  const int kh = static_cast<int>(c.w.dim(2)), kw = static_cast<int>(c.w.dim(3));
  const int64_t ho = conv2d_out_extent(x.dim(1), kh, g.stride, g.pad_top, g.pad_bottom);
  const int64_t wo = conv2d_out_extent(x.dim(2), kw, g.stride, g.pad_left, g.pad_right);
  Carried y{empty(DType::F32, {c.w.dim(0), ho, wo}, x.device), {}};
  y.stats = moments_for(y.x, moments);
  conv2d(x, c.w, c.b, g, y.x, residual, given(y.stats));
  return y;
}

}  // namespace

Carried conv3x3(const Conv& c, const Tensor& x, bool moments) { return conv(c, x, {1, 1, 1, 1, 1}, nullptr, moments); }
Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual) {
  return conv(c, x, {1, 0, 0, 0, 0}, residual, false).x;
}

Carried norm_conv3x3(const Norm& n, const Conv& c, const Carried& x, int groups, float eps, const Tensor* residual,
                     bool moments) {
  Carried y{empty(DType::F32, {c.w.dim(0), x.x.dim(1), x.x.dim(2)}, x.x.device), {}};
  y.stats = moments_for(y.x, moments);
  group_norm_conv2d(x.x, n.gamma, n.beta, groups, eps, true, c.w, c.b, {1, 1, 1, 1, 1}, y.x, residual,
                    given(x.stats), given(y.stats));
  return y;
}

Carried resnet(const Resnet& r, const Carried& x, int groups, float eps, bool moments) {
  const Carried h = norm_conv3x3(r.norm1, r.conv1, x, groups, eps, nullptr, true);
  if (!r.has_shortcut) return norm_conv3x3(r.norm2, r.conv2, h, groups, eps, &x.x, moments);
  const Tensor s = conv1x1(r.shortcut, x.x);
  return norm_conv3x3(r.norm2, r.conv2, h, groups, eps, &s, moments);
}

Carried downsample(const Conv& c, const Tensor& x, bool moments) {
  return conv(c, x, {2, 0, 0, 1, 1}, nullptr, moments);
}

Carried upsample(const Conv& c, const Tensor& x, bool moments) {
  Carried y{empty(DType::F32, {c.w.dim(0), 2 * x.dim(1), 2 * x.dim(2)}, x.device), {}};
  y.stats = moments_for(y.x, moments);
  upsample_nearest2x_conv2d(x, c.w, c.b, {1, 1, 1, 1, 1}, y.x, nullptr, given(y.stats));
  return y;
}

Carried attention(const Attention& a, const Carried& x, int groups, float eps, bool moments) {
  const int64_t c = x.x.dim(0), n = x.x.dim(1) * x.x.dim(2);
  Tensor t = empty(DType::F32, x.x.shape, x.x.device);
  group_norm(x.x, a.norm.gamma, a.norm.beta, groups, eps, false, t, given(x.stats));
  const Tensor q = conv1x1(a.q, t), k = conv1x1(a.k, t), v = conv1x1(a.v, t);  // [C, H, W]
  Tensor o = empty(DType::F32, {c, n}, x.x.device);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c)));  // head dim = C
  tf::attention(q.reshaped({c, n}), k.reshaped({c, n}), v.reshaped({c, n}), {.scale = scale, .mask = AttentionMask::none, .layout = AttentionLayout::channels}, o);
  return conv(a.out, o.reshaped(x.x.shape), {1, 0, 0, 0, 0}, &x.x, moments);
}

Carried mid_block(const MidBlock& m, const Carried& x, int groups, float eps, bool moments) {
  Carried h = resnet(m.first, x, groups, eps, true);
  if (m.has_attention) h = attention(m.attention, h, groups, eps, true);
  return resnet(m.second, h, groups, eps, moments);
}

}  // namespace tf::flux2_vae
