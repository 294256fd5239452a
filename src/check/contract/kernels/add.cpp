// add: y = a + b in fp32, one rounding (the VAE's residual sums).
#include "backend/elementwise/add.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"

namespace tf::contract {

namespace {

Case make_case(Tensor a, Tensor b, std::string what) {
  Case c;
  c.label = what + " " + shape_str(a.shape);
  c.outputs = {host_empty(DType::F32, a.shape)};
  c.inputs = {std::move(a), std::move(b)};
  return c;
}

}  // namespace

void register_add(bool cuda) {
  KernelContract k;
  k.name = "add";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    std::vector<Case> cs;
    for (Shape s : {Shape{3, 5, 7}, Shape{64, 65}, Shape{1}})
      cs.push_back(make_case(random_normal(rng, DType::F32, s), random_normal(rng, DType::F32, s), "random"));
    return cs;
  };
  k.adversarial_cases = [](Rng& rng) {
    // b = -a + small: the sum cancels exactly down to the small part; and a huge range of exponents.
    std::vector<double> a(257), b(257), c(257), d(257);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = std::ldexp(1 + static_cast<double>(rng.below(1 << 20)) * 0x1p-20, 20);
      b[i] = -a[i] + static_cast<double>(rng.below(64));
      c[i] = std::ldexp(rng.normal(), static_cast<int>(rng.below(200)) - 100);
      d[i] = std::ldexp(rng.normal(), static_cast<int>(rng.below(200)) - 100);
    }
    return std::vector<Case>{make_case(host_tensor(DType::F32, {257}, a), host_tensor(DType::F32, {257}, b), "cancelling"),
                             make_case(host_tensor(DType::F32, {257}, c), host_tensor(DType::F32, {257}, d), "wide range")};
  };
  k.reference = [](const Case& c) {
    std::vector<Tracked> a = tracked_of(c.inputs[0]), b = tracked_of(c.inputs[1]), y(a.size());
    for (size_t i = 0; i < a.size(); ++i) y[i] = f32_add(a[i], b[i]);
    return Reference{y};
  };
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { add(in[0], in[1], out[0]); };
  k.controls = {
      perturbed_inputs("bf16-staging", [](std::vector<Tensor>& in) { map_values(in[1], bf16_of); }),
      perturbed_inputs("dropped-term", [](std::vector<Tensor>& in) { map_values(in[1], [](double) { return 0.0; }); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "256 x 1024^2";
    c.inputs = {shape_only(DType::F32, {256, 1024, 1024}), shape_only(DType::F32, {256, 1024, 1024})};
    c.outputs = {shape_only(DType::F32, {256, 1024, 1024})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
