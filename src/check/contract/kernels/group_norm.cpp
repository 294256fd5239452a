// group_norm (+ SiLU): statistics per group of consecutive channels, biased variance, affine.
// Rounding model (the loosest correct fp32 implementation the spec allows: two passes in fp32):
//   mean = fp32 sum of the group (any order) / count;  d = x - mean;
//   var = fp32 sum of d * d / count;  r = rsqrt(var + eps);  y = (d * r) * gamma + beta;  silu(y).
// A kernel with fp64 statistics lies far inside this; a one-pass E[x^2] - E[x]^2 in fp32 does not
// (gate 4's large-mean groups).
#include "backend/norm/group_norm.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

std::vector<Tracked> group_norm_tracked(const std::vector<Tracked>& xv, int64_t c, int64_t per_channel, int groups,
                                        double eps_param, bool silu, const std::vector<Tracked>& gv,
                                        const std::vector<Tracked>& bv) {
  const Tracked eps = exact(f32_of(eps_param));
  const int64_t cpg = c / groups, n = cpg * per_channel;
  std::vector<Tracked> y(xv.size()), d(static_cast<size_t>(n)), sq(static_cast<size_t>(n));
  const Tracked count = exact(static_cast<double>(n));
  for (int g = 0; g < groups; ++g) {
    std::span<const Tracked> group(xv.data() + g * n, static_cast<size_t>(n));
    Tracked mean = f32_div(f32_sum(group), count);
    for (int64_t i = 0; i < n; ++i) {
      d[i] = f32_sub(group[i], mean);
      sq[i] = f32_mul(d[i], d[i]);
    }
    Tracked var = f32_div(f32_sum(sq), count);
    Tracked r = f32_rsqrt(f32_add(var, eps));
    for (int64_t i = 0; i < n; ++i) {
      int64_t ch = g * cpg + i / per_channel;
      Tracked v = f32_add(f32_mul(f32_mul(d[i], r), gv[ch]), bv[ch]);
      y[g * n + i] = silu ? f32_silu(v) : v;
    }
  }
  return y;
}

namespace {

// params: groups, eps, silu
Case make_case(Rng& rng, int64_t c, int64_t h, int64_t w, int groups, bool silu, double offset = 0, double sigma = 1) {
  Case k;
  k.label = label({{"c", c}, {"h", h}, {"w", w}, {"groups", groups}}) + (silu ? " silu" : "") +
            (offset != 0 ? " offset=" + std::to_string(offset) : "");
  std::vector<double> x(static_cast<size_t>(c * h * w));
  for (double& v : x) v = offset + sigma * rng.normal();
  k.inputs = {host_tensor(DType::F32, {c, h, w}, x), random_normal(rng, DType::BF16, {c}, 1.0),
              random_normal(rng, DType::BF16, {c}, 0.5)};
  k.outputs = {host_empty(DType::F32, {c, h, w})};
  k.params = {static_cast<double>(groups), 1e-6, silu ? 1.0 : 0.0};
  return k;
}

Reference group_norm_reference(const Case& k) {
  const Tensor& x = k.inputs[0];
  return {group_norm_tracked(tracked_of(x), x.dim(0), x.numel() / x.dim(0), static_cast<int>(k.params[0]),
                             k.params[1], k.params[2] != 0, tracked_of(k.inputs[1]), tracked_of(k.inputs[2]))};
}

void run_group_norm(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  group_norm(in[0], in[1], in[2], static_cast<int>(p[0]), static_cast<float>(p[1]), p[2] != 0, out[0]);
}

// E[x^2] - E[x]^2 in fp32: the one-pass variance that cancels catastrophically.
void one_pass_variance(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const Tensor& x = in[0];
  const int64_t c = x.dim(0), per_channel = x.numel() / c;
  const int groups = static_cast<int>(p[0]);
  const int64_t cpg = c / groups, n = cpg * per_channel;
  std::vector<double> xv = values_of(x), gv = values_of(in[1]), bv = values_of(in[2]), y(xv.size());
  for (int g = 0; g < groups; ++g) {
    float s = 0, s2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      float v = static_cast<float>(xv[g * n + i]);
      s += v;
      s2 += v * v;
    }
    float mean = s / n, var = std::fmax(s2 / n - mean * mean, 0.0f), r = 1 / std::sqrt(var + static_cast<float>(p[1]));
    for (int64_t i = 0; i < n; ++i) {
      int64_t ch = g * cpg + i / per_channel;
      float v = (static_cast<float>(xv[g * n + i]) - mean) * r * static_cast<float>(gv[ch]) + static_cast<float>(bv[ch]);
      y[g * n + i] = p[2] != 0 ? v / (1 + std::exp(-v)) : v;
    }
  }
  set_values(out[0], y);
}

}  // namespace

void register_group_norm(bool cuda) {
  KernelContract k;
  k.name = "group_norm";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{
        make_case(rng, 64, 7, 9, 32, true),    // 2 channels per group, odd picture
        make_case(rng, 64, 8, 8, 32, false),
        make_case(rng, 96, 5, 3, 32, true),    // 3 channels per group
        make_case(rng, 32, 16, 17, 32, true),  // one channel per group, a chunk edge plus one
        make_case(rng, 128, 1, 65, 32, false), // [C, N] layout
    };
  };
  k.adversarial_cases = [](Rng& rng) {
    std::vector<Case> cs{make_case(rng, 64, 6, 5, 32, false, 3000.0, 0.01),   // mean far above the spread
                         make_case(rng, 64, 6, 5, 32, true, 0.0, 0x1p40),    // huge values
                         make_case(rng, 64, 6, 5, 32, true, 0.0, 0x1p-40)};  // tiny values: eps dominates
    // Constant groups: the variance is exactly zero and eps alone sets the scale.
    Case flat = make_case(rng, 64, 4, 4, 32, false);
    std::vector<double> x(64 * 16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i / 32) * 0.25 - 2;
    set_values(flat.inputs[0], x);
    flat.label = "constant groups";
    cs.push_back(flat);
    return cs;
  };
  k.reference = group_norm_reference;
  k.run = run_group_norm;
  k.controls = {
      reimplemented("one-pass-fp32-variance", one_pass_variance),
      perturbed_params("dropped-eps", [](Params& p) { p[1] = 0; }),
      perturbed_params("statistics-over-two-groups", [](Params& p) { p[0] = p[0] / 2; }),
      perturbed_params("dropped-silu", [](Params& p) { p[2] = p[2] != 0 ? 0 : 1; }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) { map_values(in[0], f16_of); }),
  };
  k.limit_cases = [] {
    std::vector<Case> cs;
    for (auto [c, hw] : {std::pair{128, 1024}, {256, 1024}, {512, 128}}) {
      Case k;
      k.label = label({{"c", c}, {"hw", hw}});
      k.inputs = {shape_only(DType::F32, {c, hw, hw}), shape_only(DType::BF16, {c}), shape_only(DType::BF16, {c})};
      k.outputs = {shape_only(DType::F32, {c, hw, hw})};
      k.params = {32, 1e-6, 1};
      cs.push_back(k);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
