// upsample_nearest2x: y[c, i, j] = x[c, i / 2, j / 2], a copy: the allowance is zero everywhere.
#include "backend/conv/upsample_nearest2x.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"

namespace tf::contract {

namespace {

Case make_case(Tensor x) {
  Case c;
  c.label = label({{"c", x.dim(0)}, {"h", x.dim(1)}, {"w", x.dim(2)}});
  c.outputs = {host_empty(DType::F32, {x.dim(0), 2 * x.dim(1), 2 * x.dim(2)})};
  c.inputs = {std::move(x)};
  return c;
}

Reference upsample_reference(const Case& c) {
  const Tensor& x = c.inputs[0];
  const int64_t ch = x.dim(0), h = x.dim(1), w = x.dim(2);
  std::vector<Tracked> xv = tracked_of(x), y(static_cast<size_t>(ch * 4 * h * w));
  for (int64_t k = 0; k < ch; ++k)
    for (int64_t i = 0; i < 2 * h; ++i)
      for (int64_t j = 0; j < 2 * w; ++j) y[(k * 2 * h + i) * 2 * w + j] = xv[(k * h + i / 2) * w + j / 2];
  return {y};
}

// Reads the source picture transposed (x[c, j / 2, i / 2]).
void swapped_axes(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
  const Tensor& x = in[0];
  const int64_t ch = x.dim(0), h = x.dim(1), w = x.dim(2);
  std::vector<double> xv = values_of(x), y(static_cast<size_t>(ch * 4 * h * w));
  for (int64_t k = 0; k < ch; ++k)
    for (int64_t i = 0; i < 2 * h; ++i)
      for (int64_t j = 0; j < 2 * w; ++j) {
        int64_t a = (j / 2) % h, b = (i / 2) % w;
        y[(k * 2 * h + i) * 2 * w + j] = xv[(k * h + a) * w + b];
      }
  set_values(out[0], y);
}

}  // namespace

void register_upsample_nearest2x(bool cuda) {
  KernelContract k;
  k.name = "upsample_nearest2x";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(random_normal(rng, DType::F32, {3, 5, 7})),
                             make_case(random_normal(rng, DType::F32, {16, 8, 8})),
                             make_case(random_normal(rng, DType::F32, {7, 1, 33}))};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Huge and subnormal values: a copy keeps every bit (no flush to zero, no staging).
    std::vector<double> v(4 * 6 * 5);
    for (double& x : v) x = std::ldexp(rng.normal(), static_cast<int>(rng.below(250)) - 140);
    return std::vector<Case>{make_case(host_tensor(DType::F32, {4, 6, 5}, v))};
  };
  k.reference = upsample_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { upsample_nearest2x(in[0], out[0]); };
  k.controls = {
      reimplemented("swapped-axes", swapped_axes),
      perturbed_inputs("bf16-staging", [](std::vector<Tensor>& in) { map_values(in[0], bf16_of); }),
      perturbed_inputs("subnormals-flushed", [](std::vector<Tensor>& in) {
        map_values(in[0], [](double x) { return std::fabs(x) < 0x1p-126 ? 0.0 : x; });
      }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "c=256 512^2 -> 1024^2";
    c.inputs = {shape_only(DType::F32, {256, 512, 512})};
    c.outputs = {shape_only(DType::F32, {256, 1024, 1024})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
