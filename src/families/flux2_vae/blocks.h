#pragma once
// The VAE's building blocks as sequences of backend ops on one device (diffusers' ResnetBlock2D,
// Downsample2D, Upsample2D, the mid block's Attention and UNetMidBlock2D). Activations F32 [C, H, W],
// carried with their channel moments (channel_moments.h) where the op that wrote them gave them and a
// GroupNorm reads them next (`moments`: give the output's).
#include "families/common/steps.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

// y = conv(x) with 3x3 "same" padding, optionally + residual.
Carried conv3x3(const Conv& c, const Tensor& x, bool moments);
Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual = nullptr);
// conv3x3(silu(group_norm(x))) (+ residual), the normalised picture left to the backend to store
// or fold into the convolution.
Carried norm_conv3x3(const Norm& n, const Conv& c, const Carried& x, int groups, float eps, const Tensor* residual,
                     bool moments);
// shortcut(x) + conv2(silu(gn2(conv1(silu(gn1(x)))))).
Carried resnet(const Resnet& r, const Carried& x, int groups, float eps, bool moments);
// Zero column right, zero row bottom, 3x3 stride 2.
Carried downsample(const Conv& c, const Tensor& x, bool moments);
// Nearest 2x, then 3x3.
Carried upsample(const Conv& c, const Tensor& x, bool moments);
// x + to_out(attention(q(t), k(t), v(t))) with t = gn(x), one head of all channels.
Carried attention(const Attention& a, const Carried& x, int groups, float eps, bool moments);
Carried mid_block(const MidBlock& m, const Carried& x, int groups, float eps, bool moments);

}  // namespace tf::flux2_vae
