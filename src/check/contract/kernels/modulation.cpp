// Diffusion transformers' element-wise ops, each step one bf16 rounding as the reference's tensors:
//   modulate: y = bf16(bf16(x * bf16(1 + scale)) + shift)
//   silu: y = bf16(silu(x))
//   situ_gated_product(u, g): y = bf16(((4 tanh(g / 4)) sigmoid(g)) (25 tanh(u / 25))), fp32 inside
#include "backend/elementwise/modulate.h"
#include "backend/elementwise/silu.h"
#include "backend/elementwise/situ_gated_product.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

Case modulate_case(Rng& rng, int64_t rows, int64_t d, double scale_sigma, std::string what) {
  Case c;
  c.label = what + " " + label({{"rows", rows}, {"d", d}});
  c.inputs = {random_normal(rng, DType::BF16, {rows, d}, 2.0), random_normal(rng, DType::BF16, {d}),
              random_normal(rng, DType::BF16, {d}, scale_sigma)};
  c.outputs = {host_empty(DType::BF16, {rows, d})};
  return c;
}

// modulate with a planted fault: 1 (1 + scale) not rounded, 2 the product not rounded, 3 scale and shift swapped.
void faulty_modulate(const std::vector<Tensor>& in, std::vector<Tensor>& out, int fault) {
  const int64_t d = in[0].dim(1);
  std::vector<double> x = values_of(in[0]), sh = values_of(in[fault == 3 ? 2 : 1]), sc = values_of(in[fault == 3 ? 1 : 2]);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float one_plus = 1.0f + static_cast<float>(sc[i % d]);
    const float m = static_cast<float>(x[i]) * (fault == 1 ? one_plus : static_cast<float>(bf16_of(one_plus)));
    y[i] = (fault == 2 ? m : static_cast<float>(bf16_of(m))) + static_cast<float>(sh[i % d]);
  }
  set_values(out[0], y);
}

Case situ_case(Rng& rng, int64_t rows, int64_t F, double sigma, std::string what) {
  Case c;
  c.label = what + " " + label({{"rows", rows}, {"F", F}});
  c.inputs = {random_normal(rng, DType::BF16, {rows, F}, sigma), random_normal(rng, DType::BF16, {rows, F}, sigma)};
  c.outputs = {host_empty(DType::BF16, {rows, F})};
  return c;
}

void faulty_situ(const std::vector<Tensor>& in, std::vector<Tensor>& out, int fault) {
  std::vector<double> up = values_of(in[0]), gate = values_of(in[1]), y(up.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = situ_faulty(static_cast<float>(up[i]), static_cast<float>(gate[i]), fault);
  set_values(out[0], y);
}

}  // namespace

Tracked situ_reference(const Tracked& u, const Tracked& g) {
  const Tracked a = f32_mul(f32_mul(exact(4.0), f32_tanh(f32_div(g, exact(4.0)))), f32_sigmoid(g));
  return round_bf16_point(f32_mul(a, f32_mul(exact(25.0), f32_tanh(f32_div(u, exact(25.0))))));
}

double situ_faulty(float u, float g, int fault) {
  auto r = [fault](float v) { return fault == 1 ? static_cast<float>(bf16_of(v)) : v; };
  if (fault == 3) std::swap(u, g);
  const float a = r(r(4.0f * r(std::tanh(r(g / 4.0f)))) * r(1.0f / (1.0f + std::exp(-g))));
  const float b = fault == 2 ? std::tanh(u) : r(25.0f * r(std::tanh(r(u / 25.0f))));
  return bf16_of(a * b);
}

void register_modulation(bool cuda) {
  KernelContract m;
  m.name = "modulate";
  m.families = {"moss_image"};
  m.backends = backends(cuda);
  m.random_cases = [](Rng& rng) {
    return std::vector<Case>{modulate_case(rng, 37, 64, 0.5, "random"), modulate_case(rng, 5, 3072, 0.2, "random")};
  };
  m.adversarial_cases = [](Rng& rng) {
    // scale near -1 (1 + scale cancels) and large shifts against small products
    Case c = modulate_case(rng, 8, 128, 0.01, "cancelling");
    std::vector<double> sc = values_of(c.inputs[2]);
    for (double& v : sc) v = bf16_of(-1.0 + v);
    set_values(c.inputs[2], sc);
    return std::vector<Case>{c};
  };
  m.reference = [](const Case& c) {
    const int64_t d = c.inputs[0].dim(1);
    std::vector<Tracked> x = tracked_of(c.inputs[0]), sh = tracked_of(c.inputs[1]), sc = tracked_of(c.inputs[2]), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const Tracked one_plus = round_bf16_point(f32_add(exact(1.0), sc[i % d]));
      y[i] = round_bf16_point(f32_add(round_bf16_point(f32_mul(x[i], one_plus)), sh[i % d]));
    }
    return Reference{y};
  };
  m.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { modulate(in[0], in[1], in[2], out[0]); };
  m.controls = {
      reimplemented("unrounded-one-plus-scale", [](auto& in, auto& out, auto&) { faulty_modulate(in, out, 1); }),
      reimplemented("unrounded-product", [](auto& in, auto& out, auto&) { faulty_modulate(in, out, 2); }),
      reimplemented("swapped-shift-and-scale", [](auto& in, auto& out, auto&) { faulty_modulate(in, out, 3); }),
  };
  m.limit_cases = [] {
    Case c;
    c.label = "16384 x 3072";
    c.inputs = {shape_only(DType::BF16, {16384, 3072}), shape_only(DType::BF16, {3072}), shape_only(DType::BF16, {3072})};
    c.outputs = {shape_only(DType::BF16, {16384, 3072})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(m));

  KernelContract s;
  s.name = "silu";
  s.families = {"moss_image"};
  s.backends = backends(cuda);
  s.random_cases = [](Rng& rng) {
    Case c;
    c.label = "random [3, 3072]";
    c.inputs = {random_normal(rng, DType::BF16, {3, 3072}, 4.0)};
    c.outputs = {host_empty(DType::BF16, {3, 3072})};
    return std::vector<Case>{c};
  };
  s.adversarial_cases = [](Rng&) {
    std::vector<double> g(512);
    for (size_t i = 0; i < g.size(); ++i) g[i] = bf16_of(-100 + 200.0 * static_cast<double>(i) / 511);
    Case c;
    c.label = "saturating [-100, 100]";
    c.inputs = {host_tensor(DType::BF16, {4, 128}, g)};
    c.outputs = {host_empty(DType::BF16, {4, 128})};
    return std::vector<Case>{c};
  };
  s.reference = [](const Case& c) {
    std::vector<Tracked> x = tracked_of(c.inputs[0]), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = round_bf16_point(f32_silu(x[i]));
    return Reference{y};
  };
  s.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { silu(in[0], out[0]); };
  s.controls = {
      reimplemented("sigmoid-not-silu",
                    [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
                      std::vector<double> x = values_of(in[0]);
                      for (double& v : x) v = 1.0f / (1.0f + std::exp(-static_cast<float>(v)));
                      set_values(out[0], x);
                    }),
  };
  s.limit_cases = [] {
    Case c;
    c.label = "2 x 3072";
    c.inputs = {shape_only(DType::BF16, {2, 3072})};
    c.outputs = {shape_only(DType::BF16, {2, 3072})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(s));

  KernelContract g;
  g.name = "situ_gated_product";
  g.families = {"moss_image"};
  g.backends = backends(cuda);
  g.random_cases = [](Rng& rng) {
    return std::vector<Case>{situ_case(rng, 37, 96, 3.0, "random"), situ_case(rng, 3, 8192, 30.0, "wide")};
  };
  g.adversarial_cases = [](Rng& rng) { return std::vector<Case>{situ_case(rng, 4, 512, 300.0, "saturating")}; };
  g.reference = [](const Case& c) {
    std::vector<Tracked> up = tracked_of(c.inputs[0]), gate = tracked_of(c.inputs[1]), y(up.size());
    for (size_t i = 0; i < y.size(); ++i) y[i] = situ_reference(up[i], gate[i]);
    return Reference{y};
  };
  g.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { situ_gated_product(in[0], in[1], out[0]); };
  g.controls = {
      reimplemented("rounded-steps", [](auto& in, auto& out, auto&) { faulty_situ(in, out, 1); }),
      reimplemented("unbounded-up", [](auto& in, auto& out, auto&) { faulty_situ(in, out, 2); }),
      reimplemented("swapped-up-and-gate", [](auto& in, auto& out, auto&) { faulty_situ(in, out, 3); }),
  };
  g.limit_cases = [] {
    Case c;
    c.label = "16384 x 8192";
    c.inputs = {shape_only(DType::BF16, {16384, 8192}), shape_only(DType::BF16, {16384, 8192})};
    c.outputs = {shape_only(DType::BF16, {16384, 8192})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(g));
}

}  // namespace tf::contract
