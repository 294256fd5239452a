#pragma once
// The VAE's ops on CUDA tensors; backend/<op>.cpp has checked dtypes, shapes and devices before
// calling these. Work is queued on the runtime's stream.
#include "backend/conv2d.h"
#include "core/tensor.h"

namespace tf::cuda {

void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual);
void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y);
void upsample_nearest2x(const Tensor& x, Tensor& y);
void add(const Tensor& a, const Tensor& b, Tensor& y);
void attention_single_head(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o);

}  // namespace tf::cuda
