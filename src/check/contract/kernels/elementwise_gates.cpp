// silu_gated_product: y = bf16(bf16(silu(gate)) * up);  sigmoid_gate: y = bf16(x * bf16(sigmoid(gate))).
// Two rounding points each, as torch's bf16 tensors have them.
#include "backend/elementwise/sigmoid_gate.h"
#include "backend/elementwise/silu_gated_product.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

Case make_case(Tensor a, Tensor b, std::string what) {
  Case c;
  c.label = what + " " + shape_str(a.shape);
  c.outputs = {host_empty(DType::BF16, a.shape)};
  c.inputs = {std::move(a), std::move(b)};
  return c;
}

std::vector<Case> random_cases(Rng& rng) {
  std::vector<Case> cs;
  for (Shape s : {Shape{63, 64}, Shape{65, 48}, Shape{1, 12288}})
    cs.push_back(make_case(random_normal(rng, DType::BF16, s, 3.0), random_normal(rng, DType::BF16, s), "random"));
  return cs;
}

std::vector<Case> adversarial_cases(Rng& rng) {
  // Gates from -100 to 100 (sigmoid saturates to 0 and 1, silu's dip near -1.28) and tiny/huge operands.
  std::vector<double> g(512), u(512);
  for (size_t i = 0; i < g.size(); ++i) {
    g[i] = bf16_of(-100 + 200.0 * static_cast<double>(i) / 511);
    u[i] = bf16_of(std::ldexp(rng.normal(), static_cast<int>(rng.below(100)) - 50));
  }
  return {make_case(host_tensor(DType::BF16, {4, 128}, g), host_tensor(DType::BF16, {4, 128}, u), "saturating")};
}

// Each element through `f` in fp32 with the given rounding points (a faulty variant drops one).
void elementwise(const std::vector<Tensor>& in, std::vector<Tensor>& out, bool silu, bool inner_rounding) {
  std::vector<double> a = values_of(in[0]), b = values_of(in[1]), y(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    float g = static_cast<float>(silu ? a[i] : b[i]), other = static_cast<float>(silu ? b[i] : a[i]);
    float act = silu ? g / (1 + std::exp(-g)) : 1 / (1 + std::exp(-g));
    if (inner_rounding) act = static_cast<float>(bf16_of(act));
    y[i] = act * other;
  }
  set_values(out[0], y);
}

}  // namespace

void register_elementwise_gates(bool cuda) {
  KernelContract s;
  s.name = "silu_gated_product";
  s.families = {"moss_image"};
  s.backends = backends(cuda);
  s.random_cases = random_cases;
  s.adversarial_cases = adversarial_cases;
  s.reference = [](const Case& c) {
    std::vector<Tracked> g = tracked_of(c.inputs[0]), u = tracked_of(c.inputs[1]), y(g.size());
    for (size_t i = 0; i < g.size(); ++i) y[i] = round_bf16_point(f32_mul(round_bf16_point(f32_silu(g[i])), u[i]));
    return Reference{y};
  };
  s.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { silu_gated_product(in[0], in[1], out[0]); };
  s.controls = {
      reimplemented("dropped-activation-rounding", [](auto& in, auto& out, auto&) { elementwise(in, out, true, false); }),
      perturbed_inputs("swapped-operands", [](std::vector<Tensor>& in) { std::swap(in[0], in[1]); }),
  };
  s.limit_cases = [] {
    Case c;
    c.label = "4096 x 12288";
    c.inputs = {shape_only(DType::BF16, {4096, 12288}), shape_only(DType::BF16, {4096, 12288})};
    c.outputs = {shape_only(DType::BF16, {4096, 12288})};
    return std::vector<Case>{c};
  };
  add_kernel(s);

  KernelContract g;
  g.name = "sigmoid_gate";
  g.families = {"moss_image"};
  g.backends = backends(cuda);
  g.random_cases = [](Rng& rng) {
    std::vector<Case> cs = random_cases(rng);
    for (Case& c : cs) std::swap(c.inputs[0], c.inputs[1]);  // x first, then the gate
    return cs;
  };
  g.adversarial_cases = [](Rng& rng) {
    std::vector<Case> cs = adversarial_cases(rng);
    for (Case& c : cs) std::swap(c.inputs[0], c.inputs[1]);
    return cs;
  };
  g.reference = [](const Case& c) {
    std::vector<Tracked> x = tracked_of(c.inputs[0]), gt = tracked_of(c.inputs[1]), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = round_bf16_point(f32_mul(x[i], round_bf16_point(f32_sigmoid(gt[i]))));
    return Reference{y};
  };
  g.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { sigmoid_gate(in[0], in[1], out[0]); };
  g.controls = {
      reimplemented("dropped-sigmoid-rounding", [](auto& in, auto& out, auto&) { elementwise(in, out, false, false); }),
      perturbed_inputs("swapped-operands", [](std::vector<Tensor>& in) { std::swap(in[0], in[1]); }),
  };
  g.limit_cases = [] {
    Case c;
    c.label = "4096 x 4096";
    c.inputs = {shape_only(DType::BF16, {4096, 4096}), shape_only(DType::BF16, {4096, 4096})};
    c.outputs = {shape_only(DType::BF16, {4096, 4096})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(g));
}

}  // namespace tf::contract
