// residual_add: h = bf16(h + d) in place; bf16 + bf16 in fp32 then one rounding. d may be a
// product's fp32 k-share sums [P, rows, n]: d = bf16(((d_0 + d_1) + ...) + d_{P-1}) first.
#include "backend/elementwise/residual_add.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

Case make_case(Tensor h, Tensor d, std::string what) {
  Case c;
  c.label = what + " " + shape_str(h.shape);
  c.outputs = {host_empty(DType::BF16, h.shape)};
  c.inputs = {std::move(h), std::move(d)};
  return c;
}

}  // namespace

std::vector<Tracked> residual_delta_reference(const Tensor& d) {
  std::vector<Tracked> v = tracked_of(d);
  if (d.dtype != DType::F32) return v;
  const size_t n = v.size() / static_cast<size_t>(d.dim(0));
  std::vector<Tracked> out(n);
  for (size_t i = 0; i < n; ++i) {
    Tracked s = v[i];
    for (int64_t p = 1; p < d.dim(0); ++p) s = f32_add(s, v[p * n + i]);
    out[i] = round_bf16_point(s);
  }
  return out;
}

std::vector<double> residual_delta_faulty(const Tensor& d, bool round_sum, bool drop_last) {
  std::vector<double> v = values_of(d);
  if (d.dtype != DType::F32) return v;
  const int64_t P = d.dim(0), n = static_cast<int64_t>(v.size()) / P;
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float s = static_cast<float>(v[i]);
    for (int64_t p = 1; p < P - (drop_last ? 1 : 0); ++p) s += static_cast<float>(v[p * n + i]);
    out[i] = round_sum ? bf16_of(s) : s;
  }
  return out;
}

void register_residual_add(bool cuda) {
  KernelContract k;
  k.name = "residual_add";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    std::vector<Case> cs;
    for (Shape s : {Shape{63, 64}, Shape{65, 33}, Shape{1, 4096}})
      cs.push_back(make_case(random_normal(rng, DType::BF16, s), random_normal(rng, DType::BF16, s, 0.1), "random"));
    // a product's k-share sums: 16-byte pieces and not
    for (auto [P, s] : {std::pair{4, Shape{75, 4096}}, {2, Shape{9, 33}}})
      cs.push_back(make_case(random_normal(rng, DType::BF16, s), random_normal(rng, DType::F32, {P, s[0], s[1]}, 0.1),
                             std::to_string(P) + " k-share sums"));
    return cs;
  };
  k.adversarial_cases = [](Rng& rng) {
    // Exact cancellation and operands 2^40 apart (the small one vanishes only through rounding).
    std::vector<double> a(300), b(300);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = bf16_of(std::ldexp(rng.normal(), static_cast<int>(rng.below(80)) - 40));
      b[i] = i % 2 ? -a[i] : bf16_of(a[i] * std::ldexp(1.0, -static_cast<int>(rng.below(20))));
    }
    return std::vector<Case>{make_case(host_tensor(DType::BF16, {3, 100}, a), host_tensor(DType::BF16, {3, 100}, b), "cancelling")};
  };
  k.reference = [](const Case& c) {
    std::vector<Tracked> h = tracked_of(c.inputs[0]), d = residual_delta_reference(c.inputs[1]);
    for (size_t i = 0; i < h.size(); ++i) h[i] = round_bf16_point(f32_add(h[i], d[i]));
    return Reference{h};
  };
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
    copy_into(out[0], in[0]);  // in place: run on the output's copy of h
    residual_add(out[0], in[1]);
  };
  k.controls = {
      reimplemented("truncated-rounding", [](auto& in, auto& out, auto&) {
        std::vector<double> h = values_of(in[0]), d = residual_delta_faulty(in[1], true, false);
        for (size_t i = 0; i < h.size(); ++i)
          h[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(static_cast<float>(h[i] + d[i])) & 0xffff0000u);
        set_values(out[0], h);
      }),
      reimplemented("k-share-sum-unrounded", [](auto& in, auto& out, auto&) {
        std::vector<double> h = values_of(in[0]), d = residual_delta_faulty(in[1], false, false);
        for (size_t i = 0; i < h.size(); ++i) h[i] = bf16_of(static_cast<float>(h[i]) + static_cast<float>(d[i]));
        set_values(out[0], h);
      }),
      reimplemented("last-k-share-dropped", [](auto& in, auto& out, auto&) {
        std::vector<double> h = values_of(in[0]), d = residual_delta_faulty(in[1], true, true);
        for (size_t i = 0; i < h.size(); ++i) h[i] = bf16_of(static_cast<float>(h[i]) + static_cast<float>(d[i]));
        set_values(out[0], h);
      }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) { map_values(in[0], f16_of); map_values(in[1], f16_of); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "4096 x 4096";
    c.inputs = {shape_only(DType::BF16, {4096, 4096}), shape_only(DType::BF16, {4096, 4096})};
    c.outputs = {shape_only(DType::BF16, {4096, 4096})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));

  // The gated form: h = bf16(h + d * gate[column]), fp32 steps, rounded once.
  KernelContract g;
  g.name = "residual_add_gated";
  g.families = {"moss_image"};
  g.backends = backends(cuda);
  auto gated_case = [](Rng& rng, Shape s, double gate_sigma) {
    Case c = make_case(random_normal(rng, DType::BF16, s), random_normal(rng, DType::BF16, s, 0.5), "gated");
    c.inputs.push_back(random_normal(rng, DType::BF16, {s[1]}, gate_sigma));
    return c;
  };
  g.random_cases = [gated_case](Rng& rng) {
    return std::vector<Case>{gated_case(rng, {63, 64}, 1.0), gated_case(rng, {65, 33}, 1.0), gated_case(rng, {3, 4096}, 0.3)};
  };
  g.adversarial_cases = [gated_case](Rng& rng) {
    // gates of 2^-20..2^20: the gated product spans the residual's range and past it
    Case c = gated_case(rng, {8, 96}, 1.0);
    std::vector<double> gate = values_of(c.inputs[2]);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = bf16_of(std::ldexp(gate[i], static_cast<int>(rng.below(41)) - 20));
    set_values(c.inputs[2], gate);
    c.label = "gates 2^-20..2^20 " + c.label;
    return std::vector<Case>{c};
  };
  g.reference = [](const Case& c) {
    std::vector<Tracked> h = tracked_of(c.inputs[0]), d = tracked_of(c.inputs[1]), gate = tracked_of(c.inputs[2]);
    for (size_t i = 0; i < h.size(); ++i) h[i] = round_bf16_point(f32_add(h[i], f32_mul(d[i], gate[i % gate.size()])));
    return Reference{h};
  };
  g.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
    copy_into(out[0], in[0]);
    residual_add(out[0], in[1], &in[2]);
  };
  // h + d * gate with the product rounded (true: the official eager ops' extra rounding) or not, the gate of
  // column (i + shift) % n
  auto faulty = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, bool round_product, size_t shift) {
    std::vector<double> h = values_of(in[0]), d = values_of(in[1]), gate = values_of(in[2]);
    for (size_t i = 0; i < h.size(); ++i) {
      const float p = static_cast<float>(d[i]) * static_cast<float>(gate[(i + shift) % gate.size()]);
      h[i] = bf16_of(static_cast<float>(h[i]) + (round_product ? static_cast<float>(bf16_of(p)) : p));
    }
    set_values(out[0], h);
  };
  g.controls = {
      reimplemented("rounded-gated-product", [faulty](auto& in, auto& out, auto&) { faulty(in, out, true, 0); }),
      reimplemented("next-column-gate", [faulty](auto& in, auto& out, auto&) { faulty(in, out, false, 1); }),
      perturbed_inputs("dropped-gate", [](std::vector<Tensor>& in) { map_values(in[2], [](double) { return 1.0; }); }),
      reimplemented("truncated-rounding", [](auto& in, auto& out, auto&) {
        std::vector<double> h = values_of(in[0]), d = values_of(in[1]), gate = values_of(in[2]);
        for (size_t i = 0; i < h.size(); ++i) {
          const float p = static_cast<float>(d[i]) * static_cast<float>(gate[i % gate.size()]);
          h[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(static_cast<float>(h[i]) + p) & 0xffff0000u);
        }
        set_values(out[0], h);
      }),
  };
  g.limit_cases = [] {
    Case c;
    c.label = "8392 x 3072";
    c.inputs = {shape_only(DType::BF16, {8392, 3072}), shape_only(DType::BF16, {8392, 3072}), shape_only(DType::BF16, {3072})};
    c.outputs = {shape_only(DType::BF16, {8392, 3072})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(g));
}

}  // namespace tf::contract
