// linear: y[t, o] = bf16(sum_k x[t, k] w[o, k]); bf16 x bf16 products are exact in fp32, one fp32
// sum of K terms in any order, one rounding to bf16.
#include "backend/linear.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/encoder_ops.h"

namespace tf::contract {

namespace {

Case make_case(Tensor x, Tensor w, std::string what) {
  Case c;
  c.label = what + " " + label({{"tokens", x.dim(0)}, {"in", x.dim(1)}, {"out", w.dim(0)}});
  c.outputs = {host_empty(DType::BF16, {x.dim(0), w.dim(0)})};
  c.inputs = {std::move(x), std::move(w)};
  return c;
}

Case random_case(Rng& rng, int64_t n, int64_t k, int64_t o) {
  return make_case(random_normal(rng, DType::BF16, {n, k}),
                   random_normal(rng, DType::BF16, {o, k}, 1 / std::sqrt(static_cast<double>(k))), "random");
}

Reference linear_reference(const Case& c) {
  const int64_t n = c.inputs[0].dim(0), k = c.inputs[0].dim(1), o = c.inputs[1].dim(0);
  std::vector<Tracked> x = tracked_of(c.inputs[0]), w = tracked_of(c.inputs[1]), y(static_cast<size_t>(n * o));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < o; ++j)
      y[t * o + j] = round_bf16_point(f32_dot(std::span(x).subspan(t * k, k), std::span(w).subspan(j * k, k)));
  return {y};
}

// A faulty linear: `bf16_sum` rounds the running sum to bf16 after every term (an added rounding
// point / bf16 accumulation), `transposed` reads w as [K, N], `truncate` chops instead of rounding.
void faulty_linear(const std::vector<Tensor>& in, std::vector<Tensor>& out, bool bf16_sum, bool transposed, bool truncate) {
  const int64_t n = in[0].dim(0), k = in[0].dim(1), o = in[1].dim(0);
  std::vector<double> x = values_of(in[0]), w = values_of(in[1]), y(static_cast<size_t>(n * o));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < o; ++j) {
      float acc = 0;
      for (int64_t i = 0; i < k; ++i) {
        double wv = transposed ? w[(i * o + j) % (o * k)] : w[j * k + i];
        acc += static_cast<float>(x[t * k + i]) * static_cast<float>(wv);
        if (bf16_sum) acc = static_cast<float>(bf16_of(acc));
      }
      y[t * o + j] = truncate ? std::bit_cast<float>(std::bit_cast<uint32_t>(acc) & 0xffff0000u) : acc;
    }
  set_values(out[0], y);
}

}  // namespace

void register_linear(bool cuda) {
  KernelContract k;
  k.name = "linear";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{random_case(rng, 1, 64, 40), random_case(rng, 63, 96, 33), random_case(rng, 64, 128, 16),
                             random_case(rng, 65, 130, 24), random_case(rng, 7, 1000, 9),
                             // CUDA's streaming kernel with k shares and a partial weight tile
                             random_case(rng, 9, 2048, 130)};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Terms +-2^20 that cancel exactly around small ones, and values far outside fp16's range.
    const int64_t n = 5, kk = 48, o = 6;
    std::vector<double> x(n * kk), w(o * kk);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t i = 0; i < kk; ++i)
        x[t * kk + i] = i < 2 ? (i == 0 ? 0x1p20 : -0x1p20) : static_cast<double>(rng.below(9)) - 4;
    for (int64_t j = 0; j < o; ++j)
      for (int64_t i = 0; i < kk; ++i) w[j * kk + i] = i < 2 ? 1.0 : bf16_of(rng.normal() * 0.25);
    std::vector<double> xs(n * kk), ws(o * kk);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::ldexp(rng.normal(), static_cast<int>(rng.below(60)) - 30);
    for (size_t i = 0; i < ws.size(); ++i) ws[i] = std::ldexp(rng.normal(), static_cast<int>(rng.below(40)) - 20);
    return std::vector<Case>{
        make_case(host_tensor(DType::BF16, {n, kk}, x), host_tensor(DType::BF16, {o, kk}, w), "cancelling +-2^20"),
        make_case(host_tensor(DType::BF16, {n, kk}, xs), host_tensor(DType::BF16, {o, kk}, ws), "range 2^-50..2^30")};
  };
  k.reference = linear_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { linear(in[0], in[1], out[0]); };
  k.controls = {
      reimplemented("bf16-accumulation", [](auto& in, auto& out, auto&) { faulty_linear(in, out, true, false, false); }),
      reimplemented("swapped-weight-axes", [](auto& in, auto& out, auto&) { faulty_linear(in, out, false, true, false); }),
      reimplemented("truncated-output-rounding", [](auto& in, auto& out, auto&) { faulty_linear(in, out, false, false, true); }),
      perturbed_inputs("dropped-term", [](std::vector<Tensor>& in) {
        std::vector<double> x = values_of(in[0]);
        int64_t kk = in[0].dim(1);
        for (size_t i = kk - 1; i < x.size(); i += kk) x[i] = 0;
        set_values(in[0], x);
      }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) { map_values(in[0], f16_of); map_values(in[1], f16_of); }),
  };
  k.limit_cases = [] {
    // The released projections at 4096 tokens: qkv 4096 -> 8192, mlp 4096 -> 12288 and back.
    std::vector<Case> cs;
    for (auto [n, kk, o] : {std::tuple{4096, 4096, 8192}, {4096, 4096, 12288}, {4096, 12288, 4096}, {1, 4096, 32}, {65, 4096, 4096}}) {
      Case c;
      c.label = label({{"tokens", n}, {"in", kk}, {"out", o}});
      c.inputs = {shape_only(DType::BF16, {n, kk}), shape_only(DType::BF16, {o, kk})};
      c.outputs = {shape_only(DType::BF16, {n, o})};
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
