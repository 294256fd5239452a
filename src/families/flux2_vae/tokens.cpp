#include "families/flux2_vae/tokens.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace tf::flux2_vae {

namespace {

std::vector<float> bn_std(const std::vector<float>& var, double eps) {
  std::vector<float> s(var.size());
  const float e = static_cast<float>(eps);  // torch adds a Python float to an fp32 tensor in fp32
  for (size_t i = 0; i < var.size(); ++i) s[i] = std::sqrt(var[i] + e);
  return s;
}

// The 2x2 patchify both directions share: latent [Cz, h, w] element (c, 2i+dy, 2j+dx) is token row
// i * (w/2) + j, feature 4c + 2dy + dx of a k-wide row. Calls fn(feature, latent index, token index).
template <class Fn>
void for_each_patch_element(int64_t cz, int64_t h, int64_t w, int64_t k, Fn fn) {
  const int64_t cols = w / 2;
  for (int64_t c = 0; c < cz; ++c)
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const int64_t f = 4 * c + 2 * dy + dx;
        for (int64_t i = 0; i < h / 2; ++i)
          for (int64_t j = 0; j < cols; ++j) fn(f, (c * h + 2 * i + dy) * w + 2 * j + dx, (i * cols + j) * k + f);
      }
}

// z[c, 2i + dy, 2j + dx] = P[f, i * (w/2) + j] * sqrt(bn_var + eps) + bn_mean, f = 4c + 2dy + dx, with
// P's element at src[index(f, token)].
template <class Index>
Tensor denormalised_latents(const float* src, int64_t cz, int64_t h, int64_t w, const std::vector<float>& bn_mean,
                            const std::vector<float>& bn_var, double eps, Index index) {
  const int64_t k = 4 * cz;
  const std::vector<float> sd = bn_std(bn_var, eps);
  Tensor z = empty(DType::F32, {cz, h, w});
  float* zp = z.ptr<float>();
  for_each_patch_element(cz, h, w, k, [&](int64_t f, int64_t latent, int64_t token) {
    const float scaled = src[index(f, token / k)] * sd[f];
    zp[latent] = scaled + bn_mean[f];
  });
  return z;
}

}  // namespace

Tensor posterior_latents(const Tensor& moments, const Tensor* noise) {
  require(moments.dtype == DType::F32 && moments.rank() == 3 && moments.dim(0) % 2 == 0,
          "moments are " + moments.describe() + ", expected F32 [2 Cz, h, w]");
  const int64_t cz = moments.dim(0) / 2, hw = moments.dim(1) * moments.dim(2);
  Tensor z = empty(DType::F32, {cz, moments.dim(1), moments.dim(2)});
  const float* mean = moments.ptr<const float>();
  const float* logvar = mean + cz * hw;
  float* out = z.ptr<float>();
  if (!noise) {
    std::copy(mean, mean + cz * hw, out);
    return z;
  }
  require(noise->dtype == DType::F32 && noise->shape == z.shape,
          "noise is " + noise->describe() + ", expected F32 " + shape_str(z.shape));
  const float* n = noise->ptr<const float>();
  for (int64_t i = 0; i < cz * hw; ++i) {
    const float lv = std::isnan(logvar[i]) ? logvar[i] : std::clamp(logvar[i], -30.0f, 20.0f);
    const float half = 0.5f * lv;
    const float sd = std::exp(half);
    const float scaled = sd * n[i];
    out[i] = mean[i] + scaled;
  }
  return z;
}

Tensor tokens_from_latents(const Tensor& z, const std::vector<float>& bn_mean, const std::vector<float>& bn_var,
                           double eps, int64_t padding_rows) {
  require(z.dtype == DType::F32 && z.rank() == 3 && z.dim(1) % 2 == 0 && z.dim(2) % 2 == 0,
          "latents are " + z.describe() + ", expected F32 [Cz, h, w] with even h and w");
  const int64_t cz = z.dim(0), h = z.dim(1), w = z.dim(2), k = 4 * cz, cols = w / 2, n = (h / 2) * cols;
  require(static_cast<int64_t>(bn_mean.size()) == k && static_cast<int64_t>(bn_var.size()) == k,
          "batch-norm statistics hold " + std::to_string(bn_mean.size()) + " channels, expected " + std::to_string(k));
  const std::vector<float> sd = bn_std(bn_var, eps);
  Tensor t = zeros(DType::F32, {padding_rows + n, k});
  float* out = t.ptr<float>() + padding_rows * k;
  const float* zp = z.ptr<const float>();
  for_each_patch_element(cz, h, w, k, [&](int64_t f, int64_t latent, int64_t token) {
    const float centred = zp[latent] - bn_mean[f];
    out[token] = centred / sd[f];
  });
  return t;
}

Tensor latents_from_tokens(const Tensor& tokens, int64_t h, int64_t w, const std::vector<float>& bn_mean,
                           const std::vector<float>& bn_var, double eps) {
  const int64_t k = static_cast<int64_t>(bn_mean.size()), cz = k / 4;
  require(h > 0 && w > 0 && h % 2 == 0 && w % 2 == 0, "latent size " + std::to_string(h) + "x" + std::to_string(w) +
                                                          " must be even");
  const int64_t cols = w / 2, n = (h / 2) * cols;
  require(tokens.dtype == DType::F32 && tokens.rank() == 2 && tokens.dim(1) == k &&
              (tokens.dim(0) == n || tokens.dim(0) == n + kFeature2PaddingRows),
          "tokens are " + tokens.describe() + ", expected F32 [" + std::to_string(n) + " or " +
              std::to_string(n + kFeature2PaddingRows) + ", " + std::to_string(k) + "]");
  const int64_t skip = tokens.dim(0) - n;
  const float* tp = tokens.ptr<const float>();
  for (int64_t i = 0; i < skip * k; ++i)
    require(tp[i] == 0.0f, "tokens: the " + std::to_string(skip) + " padding rows ahead must be zero (row " +
                               std::to_string(i / k) + " is not)");
  return denormalised_latents(tp + skip * k, cz, h, w, bn_mean, bn_var, eps,
                               [k](int64_t f, int64_t n) { return n * k + f; });
}

Tensor latents_from_packed(const Tensor& packed, const std::vector<float>& bn_mean, const std::vector<float>& bn_var,
                           double eps) {
  const int64_t k = static_cast<int64_t>(bn_mean.size());
  require(packed.dtype == DType::F32 && packed.rank() == 3 && packed.dim(0) == k && packed.dim(1) > 0 &&
              packed.dim(2) > 0,
          "packed latents are " + packed.describe() + ", expected F32 [" + std::to_string(k) + ", h, w]");
  const int64_t n = packed.dim(1) * packed.dim(2);
  return denormalised_latents(packed.ptr<const float>(), k / 4, 2 * packed.dim(1), 2 * packed.dim(2), bn_mean, bn_var,
                              eps, [n](int64_t f, int64_t i) { return f * n + i; });
}

}  // namespace tf::flux2_vae
