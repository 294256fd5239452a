// timestep_sinusoid: t = fp32(sigma * scale); e = [cos(t f_k) | sin(t f_k)], f_k = max_period^(-k / half),
// in float64 (the kernel's library cos, sin and pow within a few float64 ulps: an allowance of
// 2^-48 |phase|), then rounded to fp32 and to bf16.
#include <cmath>

#include "backend/embed/timestep_sinusoid.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: scale, max_period. inputs: sigma [n]. outputs: e [n, dim].
Case make_case(std::vector<double> sigmas, int64_t dim, std::string what) {
  Case c;
  const int64_t n = static_cast<int64_t>(sigmas.size());
  c.label = what + " " + label({{"n", n}, {"dim", dim}});
  c.inputs = {host_tensor(DType::F32, {n}, sigmas)};
  c.outputs = {host_empty(DType::BF16, {n, dim})};
  c.params = {1000.0, 10000.0};
  return c;
}

Reference reference(const Case& c) {
  const int64_t n = c.inputs[0].dim(0), dim = c.outputs[0].dim(1), half = dim / 2;
  const std::vector<double> sigma = values_of(c.inputs[0]);
  std::vector<Tracked> e(static_cast<size_t>(n * dim));
  for (int64_t r = 0; r < n; ++r) {
    const double t = f32_of(f32_of(sigma[r]) * f32_of(c.params[0]));
    for (int64_t k = 0; k < half; ++k) {
      const double phase = t * std::pow(c.params[1], -static_cast<double>(k) / static_cast<double>(half));
      const double slack = 0x1p-48 * std::fabs(phase) + 0x1p-52;
      e[r * dim + k] = round_bf16_point(round_f32_point({std::cos(phase), slack}));
      e[r * dim + half + k] = round_bf16_point(round_f32_point({std::sin(phase), slack}));
    }
  }
  return {e};
}

void run(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  timestep_sinusoid(in[0], {static_cast<float>(p[0]), p[1]}, out[0]);
}

}  // namespace

void register_timestep_sinusoid(bool cuda) {
  KernelContract k;
  k.name = "timestep_sinusoid";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    std::vector<double> s(7);
    for (double& v : s) v = f32_of(rng.uniform());
    return std::vector<Case>{make_case(s, 256, "random sigmas"), make_case({0.93299997}, 32, "the case's sigma")};
  };
  k.adversarial_cases = [](Rng&) {
    // sigma 0 (t = 0), 1 (t = 1000, the highest phases), a shifted grid's 0.001
    return std::vector<Case>{make_case({0.0, 1.0, 0.001, 0.5}, 256, "edges")};
  };
  k.reference = reference;
  k.run = run;
  k.controls = {
      reimplemented("phase-in-fp32", [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
        const int64_t n = in[0].dim(0), dim = out[0].dim(1), half = dim / 2;
        std::vector<double> sigma = values_of(in[0]), e(static_cast<size_t>(n * dim));
        for (int64_t r = 0; r < n; ++r)
          for (int64_t k = 0; k < half; ++k) {
            const float t = static_cast<float>(sigma[r]) * static_cast<float>(p[0]);
            const float phase = t * std::pow(static_cast<float>(p[1]), -static_cast<float>(k) / static_cast<float>(half));
            e[r * dim + k] = bf16_of(std::cos(phase));
            e[r * dim + half + k] = bf16_of(std::sin(phase));
          }
        set_values(out[0], e);
      }),
      perturbed_params("dropped-scale", [](Params& p) { p[0] = 1; }),
      perturbed_params("other-max-period", [](Params& p) { p[1] = 1e5; }),
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
