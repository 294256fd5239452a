// rms_norm_gated (Qwen3_5RMSNormGated), per row of d values:
//   n = bf16(x * rsqrt(fp32 sum x^2 / d + eps));  t = bf16(w * n) for a bf16 w (exact fp32 product for F32 w);
//   y = bf16(t * silu(z))  (fp32).
#include "backend/norm/rms_norm_gated.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

Case make_case(Rng& rng, int64_t rows, int64_t d, DType wt, double sigma = 1.0) {
  Case c;
  c.label = label({{"rows", rows}, {"d", d}}) + (wt == DType::F32 ? " w=F32" : " w=BF16");
  c.inputs = {random_normal(rng, DType::BF16, {rows, d}, sigma), random_normal(rng, DType::BF16, {rows, d}, 2.0),
              random_normal(rng, wt, {d}, 0.7)};
  c.outputs = {host_empty(DType::BF16, {rows, d})};
  c.params = {1e-6};
  return c;
}

// fault: 1 no rounding of n, 2 gate applied to x's row instead of z (swapped operands), 3 (1 + w).
void faulty_gated(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, int fault) {
  const int64_t rows = in[0].dim(0), d = in[0].dim(1);
  const bool wb = in[2].dtype == DType::BF16;
  std::vector<double> x = values_of(in[0]), z = values_of(in[1]), w = values_of(in[2]), y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t i = 0; i < d; ++i) s += static_cast<float>(x[r * d + i]) * static_cast<float>(x[r * d + i]);
    float inv = 1 / std::sqrt(s / d + static_cast<float>(p[0]));
    for (int64_t i = 0; i < d; ++i) {
      float n = static_cast<float>(x[r * d + i]) * inv;
      if (fault != 1) n = static_cast<float>(bf16_of(n));
      float t = static_cast<float>(fault == 3 ? 1 + w[i] : w[i]) * n;
      if (wb) t = static_cast<float>(bf16_of(t));
      float g = static_cast<float>(fault == 2 ? x[r * d + i] : z[r * d + i]);
      y[r * d + i] = t * (g / (1 + std::exp(-g)));
    }
  }
  set_values(out[0], y);
}

}  // namespace

void register_rms_norm_gated(bool cuda) {
  KernelContract k;
  k.name = "rms_norm_gated";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(rng, 63, 128, DType::F32), make_case(rng, 65, 128, DType::BF16),
                             make_case(rng, 64, 33, DType::BF16), make_case(rng, 1, 64, DType::F32)};
  };
  k.adversarial_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(rng, 16, 64, DType::BF16, 0x1p-70), make_case(rng, 16, 64, DType::F32, 0x1p55)};
  };
  k.reference = [](const Case& c) {
    const int64_t rows = c.inputs[0].dim(0), d = c.inputs[0].dim(1);
    const bool wb = c.inputs[2].dtype == DType::BF16;
    std::vector<Tracked> x = tracked_of(c.inputs[0]), z = tracked_of(c.inputs[1]), w = tracked_of(c.inputs[2]), y(x.size()), sq(d);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < d; ++i) sq[i] = f32_mul(x[r * d + i], x[r * d + i]);
      Tracked inv = f32_rsqrt(f32_add(f32_div(f32_sum(sq), exact(static_cast<double>(d))), exact(f32_of(c.params[0]))));
      for (int64_t i = 0; i < d; ++i) {
        Tracked n = round_bf16_point(f32_mul(x[r * d + i], inv));
        Tracked t = f32_mul(w[i], n);
        if (wb) t = round_bf16_point(t);
        y[r * d + i] = round_bf16_point(f32_mul(t, f32_silu(z[r * d + i])));
      }
    }
    return Reference{y};
  };
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    rms_norm_gated(in[0], in[1], in[2], static_cast<float>(p[0]), out[0]);
  };
  k.controls = {
      reimplemented("dropped-norm-rounding", [](auto& in, auto& out, auto& p) { faulty_gated(in, out, p, 1); }),
      reimplemented("gate-from-x-not-z", [](auto& in, auto& out, auto& p) { faulty_gated(in, out, p, 2); }),
      reimplemented("1+w-instead-of-w", [](auto& in, auto& out, auto& p) { faulty_gated(in, out, p, 3); }),
      perturbed_params("dropped-eps", [](Params& p) { p[0] = 0; }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "rows=4096*32 d=128";
    c.inputs = {shape_only(DType::BF16, {4096 * 32, 128}), shape_only(DType::BF16, {4096 * 32, 128}), shape_only(DType::F32, {128})};
    c.outputs = {shape_only(DType::BF16, {4096 * 32, 128})};
    c.params = {1e-6};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
