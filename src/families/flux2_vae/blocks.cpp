#include "families/flux2_vae/blocks.h"

#include <cmath>

#include "backend/attention/attention.h"
#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/group_norm.h"
#include "backend/variants.h"

namespace tf::flux2_vae {

namespace {

const Tensor* moments_of(const Picture& p) { return p.moments.data ? &p.moments : nullptr; }
Tensor* moments_of(Picture& p) { return p.moments.data ? &p.moments : nullptr; }

// A picture of c channels on device d, with a buffer for its moments where the norms read them
// (TF_GROUP_NORM_STATS other than `pass`) and `moments` asks for them.
Picture fresh(int64_t c, int64_t h, int64_t w, Device d, bool moments = true) {
  const bool kept = moments && !variant_is<Variant::group_norm_stats>("pass");
  return {empty(DType::F32, {c, h, w}, d), kept ? empty(DType::F64, {c, 2}, d) : Tensor{}};
}

Picture conv(const Conv& c, const Tensor& x, const Conv2dGeometry& g, const Tensor* residual) {
  const int kh = static_cast<int>(c.w.dim(2)), kw = static_cast<int>(c.w.dim(3));
  const int64_t ho = conv2d_out_extent(x.dim(1), kh, g.stride, g.pad_top, g.pad_bottom);
  const int64_t wo = conv2d_out_extent(x.dim(2), kw, g.stride, g.pad_left, g.pad_right);
  Picture y = fresh(c.w.dim(0), ho, wo, x.device);
  conv2d(x, c.w, c.b, g, y.x, residual, moments_of(y));
  return y;
}

// The GroupNorm (no SiLU) of x into fresh memory.
Tensor norm(const Norm& n, const Picture& x, int groups, float eps) {
  Tensor y = empty(DType::F32, x.x.shape, x.x.device);
  group_norm(x.x, n.gamma, n.beta, groups, eps, false, y, moments_of(x));
  return y;
}

}  // namespace

Picture MomentsCarry::take(const Tensor& x) {
  Picture p{x, {}};
  const Tensor& l = last.x;
  if (l.storage && x.storage == l.storage && x.data == l.data && x.shape == l.shape) p.moments = last.moments;
  last = {};
  return p;
}

Tensor MomentsCarry::put(Picture p) {
  last = p;
  return p.x;
}

Picture conv3x3(const Conv& c, const Tensor& x, const Tensor* residual) { return conv(c, x, {1, 1, 1, 1, 1}, residual); }

Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual) {
  Tensor y = empty(DType::F32, {c.w.dim(0), x.dim(1), x.dim(2)}, x.device);
  conv2d(x, c.w, c.b, {1, 0, 0, 0, 0}, y, residual);
  return y;
}

Picture norm_conv3x3(const Norm& n, const Conv& c, const Picture& x, int groups, float eps, const Tensor* residual,
                     bool moments) {
  Picture y = fresh(c.w.dim(0), x.x.dim(1), x.x.dim(2), x.x.device, moments);
  group_norm_conv2d(x.x, n.gamma, n.beta, groups, eps, true, c.w, c.b, {1, 1, 1, 1, 1}, y.x, residual, moments_of(x),
                    moments_of(y));
  return y;
}

Picture resnet(const Resnet& r, const Picture& x, int groups, float eps) {
  const Picture h = norm_conv3x3(r.norm1, r.conv1, x, groups, eps, nullptr);
  if (!r.has_shortcut) return norm_conv3x3(r.norm2, r.conv2, h, groups, eps, &x.x);
  const Tensor s = conv1x1(r.shortcut, x.x);
  return norm_conv3x3(r.norm2, r.conv2, h, groups, eps, &s);
}

Picture downsample(const Conv& c, const Tensor& x) { return conv(c, x, {2, 0, 0, 1, 1}, nullptr); }

Picture upsample(const Conv& c, const Tensor& x) {
  Picture y = fresh(c.w.dim(0), 2 * x.dim(1), 2 * x.dim(2), x.device);
  upsample_nearest2x_conv2d(x, c.w, c.b, {1, 1, 1, 1, 1}, y.x, nullptr, moments_of(y));
  return y;
}

Picture attention(const Attention& a, const Picture& x, int groups, float eps) {
  const int64_t c = x.x.dim(0), n = x.x.dim(1) * x.x.dim(2);
  const Tensor t = norm(a.norm, x, groups, eps);
  const Tensor q = conv1x1(a.q, t), k = conv1x1(a.k, t), v = conv1x1(a.v, t);  // [C, H, W]
  Tensor o = empty(DType::F32, {c, n}, x.x.device);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c)));  // head dim = C
  tf::attention(q.reshaped({c, n}), k.reshaped({c, n}), v.reshaped({c, n}), {.scale = scale, .mask = AttentionMask::none, .layout = AttentionLayout::channels}, o);
  return conv(a.out, o.reshaped(x.x.shape), {1, 0, 0, 0, 0}, &x.x);
}

Picture mid_block(const MidBlock& m, const Picture& x, int groups, float eps) {
  Picture h = resnet(m.first, x, groups, eps);
  if (m.has_attention) h = attention(m.attention, h, groups, eps);
  return resnet(m.second, h, groups, eps);
}

}  // namespace tf::flux2_vae
