#include "backend/norm/group_norm.h"
#include "backend/norm/group_stats.h"

#include <cmath>
#include <vector>

#include "backend/cpu/vector_clones.h"
#include "core/bf16.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {

// Sum of x[0, n) in fp64 over 8 fixed interleaved lanes, then the lanes in order: the same bytes
// on every run and vectorisable.
TF_VECTOR_CLONES double sum_f64(const float* x, int64_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lane[l] += static_cast<double>(x[i + l]);
  for (int l = 0; i < n; ++i, ++l) lane[l] += static_cast<double>(x[i]);
  double s = 0;
  for (int l = 0; l < 8; ++l) s += lane[l];
  return s;
}

TF_VECTOR_CLONES double sum_sq_dev_f64(const float* x, int64_t n, double mean) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const double d = static_cast<double>(x[i + l]) - mean;
      lane[l] += d * d;
    }
  for (int l = 0; i < n; ++i, ++l) {
    const double d = static_cast<double>(x[i]) - mean;
    lane[l] += d * d;
  }
  double s = 0;
  for (int l = 0; l < 8; ++l) s += lane[l];
  return s;
}

// (x - mean) * scale + shift in fp64, rounded once to fp32.
TF_VECTOR_CLONES void affine_f64(const float* in, float* out, int64_t n, double mean, double scale, double shift) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>((static_cast<double>(in[i]) - mean) * scale + shift);
}

}  // namespace

void group_stats_f64(const Tensor& x, int groups, float eps, double* mean, double* rstd) {
  const int64_t c = x.dim(0), per_channel = x.numel() / std::max<int64_t>(c, 1);
  const int64_t cpg = c / groups, group_size = cpg * per_channel;
  const float* xp = x.ptr<const float>();
  // one group (consecutive channels, contiguous in memory) per task, split in fixed per-channel pieces so the sum
  // order does not depend on the thread count
  std::vector<double> part(c);
  parallel_for(c, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) part[ch] = sum_f64(xp + ch * per_channel, per_channel);
  });
  for (int g = 0; g < groups; ++g) {
    double s = 0;
    for (int64_t ch = g * cpg; ch < (g + 1) * cpg; ++ch) s += part[ch];
    mean[g] = group_size > 0 ? s / static_cast<double>(group_size) : 0.0;
  }
  parallel_for(c, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) part[ch] = sum_sq_dev_f64(xp + ch * per_channel, per_channel, mean[ch / cpg]);
  });
  for (int g = 0; g < groups; ++g) {
    double s = 0;
    for (int64_t ch = g * cpg; ch < (g + 1) * cpg; ++ch) s += part[ch];
    const double var = group_size > 0 ? s / static_cast<double>(group_size) : 0.0;
    rstd[g] = 1.0 / std::sqrt(var + static_cast<double>(eps));
  }
}

void group_stats(const Tensor& x, GroupStats& s) {
  std::vector<double> mean(s.groups), rstd(s.groups);
  group_stats_f64(x, s.groups, s.eps, mean.data(), rstd.data());
  double* out = s.mean_rstd.ptr<double>();
  for (int g = 0; g < s.groups; ++g) out[2 * g] = mean[g], out[2 * g + 1] = rstd[g];
}

void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y, const GroupStats* x_stats) {
  const int64_t c = x.dim(0), per_channel = x.numel() / std::max<int64_t>(c, 1);
  const int64_t cpg = c / groups;
  const float* xp = x.ptr<const float>();
  float* yp = y.ptr<float>();
  const uint16_t* gp = gamma.ptr<const uint16_t>();
  const uint16_t* bp = beta.ptr<const uint16_t>();
  std::vector<double> mean(groups), rstd(groups);
  if (x_stats) {
    const double* given = x_stats->mean_rstd.ptr<const double>();
    for (int g = 0; g < groups; ++g) mean[g] = given[2 * g], rstd[g] = given[2 * g + 1];
  } else {
    group_stats_f64(x, groups, eps, mean.data(), rstd.data());
  }

  parallel_for(c, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) {
      const double m = mean[ch / cpg];
      const double scale = rstd[ch / cpg] * static_cast<double>(float_from_bf16_bits(gp[ch]));
      const double shift = static_cast<double>(float_from_bf16_bits(bp[ch]));
      const float* in = xp + ch * per_channel;
      float* out = yp + ch * per_channel;
      affine_f64(in, out, per_channel, m, scale, shift);
      if (silu)
        for (int64_t i = 0; i < per_channel; ++i) out[i] = out[i] / (1.0f + std::exp(-out[i]));
    }
  });
}

}  // namespace tf::cpu
