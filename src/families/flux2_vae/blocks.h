#pragma once
// The VAE's building blocks as sequences of backend ops on one device (diffusers' ResnetBlock2D,
// Downsample2D, Upsample2D, the mid block's Attention and UNetMidBlock2D). Activations F32 [C, H, W].
#include "backend/conv/group_norm_conv2d.h"
#include "families/flux2_vae/weights.h"

namespace tf::flux2_vae {

// Where a block's output is normalised next in the same stage, the block takes its GroupNorm statistics as it
// writes it (y_stats: make_group_stats(groups, eps, device)) and the next block is given them (x_stats), so no
// GroupNorm passes over its input for them; null: none taken, or computed by the GroupNorm itself.

// y = conv(x) with 3x3 "same" padding, optionally + residual.
Tensor conv3x3(const Conv& c, const Tensor& x, const Tensor* residual = nullptr, GroupStats* y_stats = nullptr);
Tensor conv1x1(const Conv& c, const Tensor& x, const Tensor* residual = nullptr, GroupStats* y_stats = nullptr);
// conv3x3(silu(group_norm(x))) (+ residual), the normalised picture left to the backend to store
// or fold into the convolution; `beside`, a 1x1 convolution of x itself taken with it.
Tensor norm_conv3x3(const Norm& n, const Conv& c, const Tensor& x, int groups, float eps,
                    const Tensor* residual = nullptr, const Conv1x1OfInput* beside = nullptr,
                    const GroupStats* x_stats = nullptr, GroupStats* y_stats = nullptr);
// GroupNorm (eps 1e-6) with optional SiLU, into fresh memory.
Tensor norm(const Norm& n, const Tensor& x, int groups, float eps, bool silu, const GroupStats* x_stats = nullptr);

// shortcut(x) + conv2(silu(gn2(conv1(silu(gn1(x)))))).
Tensor resnet(const Resnet& r, const Tensor& x, int groups, float eps, const GroupStats* x_stats = nullptr,
              GroupStats* y_stats = nullptr);
// The resnets in turn, the first given x_stats, each next one its input's statistics by the one before it; the
// last takes its output's only where y_stats asks.
Tensor resnets(const std::vector<Resnet>& rs, const Tensor& x, int groups, float eps,
               const GroupStats* x_stats = nullptr, GroupStats* y_stats = nullptr);
// Zero column right, zero row bottom, 3x3 stride 2.
Tensor downsample(const Conv& c, const Tensor& x, GroupStats* y_stats = nullptr);
// Nearest 2x, then 3x3.
Tensor upsample(const Conv& c, const Tensor& x, GroupStats* y_stats = nullptr);
// x + to_out(attention(q(t), k(t), v(t))) with t = gn(x), one head of all channels.
Tensor attention(const Attention& a, const Tensor& x, int groups, float eps, const GroupStats* x_stats = nullptr,
                 GroupStats* y_stats = nullptr);
Tensor mid_block(const MidBlock& m, const Tensor& x, int groups, float eps, const GroupStats* x_stats = nullptr,
                 GroupStats* y_stats = nullptr);

}  // namespace tf::flux2_vae
