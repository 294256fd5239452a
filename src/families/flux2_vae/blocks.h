#pragma once
// The VAE's building blocks as sequences of backend ops on one device (diffusers' ResnetBlock2D,
// Downsample2D, Upsample2D, the mid block's Attention and UNetMidBlock2D). Activations F32 [C, H, W].
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

// An activation and, where the op that made it wrote them, its per-channel moments (F64 [C, 2],
// backend/norm/channel_moments.h): the statistics of the GroupNorm that reads it next, without a pass
// (TF_GROUP_NORM_STATS=epilogue or moments_pass; with `pass` none are written).
struct Picture {
  Tensor x;
  Tensor moments;  // undefined (no data) where none were written
};

// The last stage's output with its moments. A stage whose input is that very tensor (same storage, kept
// alive here so no other tensor can take it; a stage's output is not written before the next reads it)
// gives its first GroupNorm those moments instead of a pass over it; any other input (a gate's reference
// tensor, a copy) gets none.
struct MomentsCarry {
  Picture last;
  // x with the carried moments where x is the last output, and the carry emptied.
  Picture take(const Tensor& x);
  // Keeps p (its tensor and moments) for the next stage and returns its tensor.
  Tensor put(Picture p);
};

// y = conv(x) with 3x3 "same" padding, optionally + residual; its moments written where kept.
Picture conv3x3(const Conv& c, const Tensor& x, const Tensor* residual = nullptr);
Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual = nullptr);
// conv3x3(silu(group_norm(x))) (+ residual), the normalised picture left to the backend to store
// or fold into the convolution; the norm's statistics from x's moments where it has them; the output's
// moments written unless no GroupNorm reads it (moments false).
Picture norm_conv3x3(const Norm& n, const Conv& c, const Picture& x, int groups, float eps,
                     const Tensor* residual = nullptr, bool moments = true);

// shortcut(x) + conv2(silu(gn2(conv1(silu(gn1(x)))))).
Picture resnet(const Resnet& r, const Picture& x, int groups, float eps);
// Zero column right, zero row bottom, 3x3 stride 2.
Picture downsample(const Conv& c, const Tensor& x);
// Nearest 2x, then 3x3.
Picture upsample(const Conv& c, const Tensor& x);
// x + to_out(attention(q(t), k(t), v(t))) with t = gn(x), one head of all channels.
Picture attention(const Attention& a, const Picture& x, int groups, float eps);
Picture mid_block(const MidBlock& m, const Picture& x, int groups, float eps);

}  // namespace tf::flux2_vae
