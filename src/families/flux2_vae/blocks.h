#pragma once
// The VAE's building blocks as sequences of backend ops on one device (diffusers' ResnetBlock2D,
// Downsample2D, Upsample2D, the mid block's Attention and UNetMidBlock2D). Activations F32 [C, H, W].
#include "backend/conv/group_norm_conv2d.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

// y = conv(x) with 3x3 "same" padding, optionally + residual.
Tensor conv3x3(const Conv& c, const Tensor& x, const Tensor* residual = nullptr);
Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual = nullptr);
// conv3x3(silu(group_norm(x))) (+ residual), the normalised picture left to the backend to store
// or fold into the convolution; `beside`, a 1x1 convolution of x itself taken with it.
Tensor norm_conv3x3(const Norm& n, const Conv& c, const Tensor& x, int groups, float eps,
                    const Tensor* residual = nullptr, const Conv1x1OfInput* beside = nullptr);
// GroupNorm (eps 1e-6) with optional SiLU, into fresh memory.
Tensor norm(const Norm& n, const Tensor& x, int groups, float eps, bool silu);

// shortcut(x) + conv2(silu(gn2(conv1(silu(gn1(x)))))).
Tensor resnet(const Resnet& r, const Tensor& x, int groups, float eps);
// Zero column right, zero row bottom, 3x3 stride 2.
Tensor downsample(const Conv& c, const Tensor& x);
// Nearest 2x, then 3x3.
Tensor upsample(const Conv& c, const Tensor& x);
// x + to_out(attention(q(t), k(t), v(t))) with t = gn(x), one head of all channels.
Tensor attention(const Attention& a, const Tensor& x, int groups, float eps);
Tensor mid_block(const MidBlock& m, const Tensor& x, int groups, float eps);

}  // namespace tf::flux2_vae
