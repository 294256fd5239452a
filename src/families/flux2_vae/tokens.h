#pragma once
// Between the VAE's moments and Idol's feature2 tokens, on the host in fp32 with torch's rounding
// points (diffusers' DiagonalGaussianDistribution and the FLUX.2 pipeline's latent helpers):
//   logvar = clamp(logvar, -30, 20); std = exp(0.5 * logvar); z = mean + std * noise (or z = mean);
//   P[4c + 2dy + dx, i, j] = z[c, 2i + dy, 2j + dx]; P = (P - bn_mean) / sqrt(bn_var + eps);
//   token i * (w/2) + j = P[:, i, j]; feature2 = five zero rows, then the tokens.
#include <vector>

#include "core/tensor.h"

namespace tf::flux2_vae {

constexpr int64_t kFeature2PaddingRows = 5;

// moments: F32 [2 Cz, h, w] (CPU); noise: F32 [Cz, h, w] or null for the mean. Returns F32 [Cz, h, w].
Tensor posterior_latents(const Tensor& moments, const Tensor* noise);

// z: F32 [Cz, h, w] -> F32 [padding_rows + (h/2)(w/2), 4 Cz], normalised.
Tensor tokens_from_latents(const Tensor& z, const std::vector<float>& bn_mean, const std::vector<float>& bn_var,
                           double eps, int64_t padding_rows = kFeature2PaddingRows);

// The inverse: tokens [(h/2)(w/2), 4 Cz], or with the five zero rows ahead (which must be zero),
// -> z F32 [Cz, h, w] with z = P * sqrt(bn_var + eps) + bn_mean (the pipeline's de-normalisation).
Tensor latents_from_tokens(const Tensor& tokens, int64_t h, int64_t w, const std::vector<float>& bn_mean,
                           const std::vector<float>& bn_var, double eps);

// The same from the packed latents a diffusion model samples, F32 [4 Cz, h/2, w/2] (channel-first,
// the tokens transposed): the pipeline's de-normalisation and unpatchify. Returns z F32 [Cz, h, w].
Tensor latents_from_packed(const Tensor& packed, const std::vector<float>& bn_mean, const std::vector<float>& bn_var,
                           double eps);

}  // namespace tf::flux2_vae
