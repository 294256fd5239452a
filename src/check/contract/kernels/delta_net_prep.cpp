// delta_net_prep (transformers 5.17: fp32 cast, then L2 norm in fp32):
//   q = (q32 * rsqrt(fp32 sum q32^2 + 1e-6)) * dk^-0.5;  k = k32 * rsqrt(fp32 sum k32^2 + 1e-6);  v = float(v);
//   beta = bf16(sigmoid(b));  g = -exp(A_log) * softplus(a + dt_bias)   (fp32)
// 1 / sqrt(x) (two correct roundings) lies inside rsqrt's 2-ulp budget.
#include "backend/delta_rule/delta_net_prep.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// inputs: mixed, b, a, A_log, dt_bias; outputs q, k, v, beta, g. params: hk, dk, hv, dv.
Case make_case(Rng& rng, int64_t T, int64_t hk, int64_t dk, int64_t hv, int64_t dv, DType param_type, double sigma = 1.0) {
  Case c;
  c.label = label({{"tokens", T}, {"key_heads", hk}, {"dk", dk}, {"value_heads", hv}, {"dv", dv}}) +
            (param_type == DType::F32 ? " A_log=F32" : " A_log=BF16");
  std::vector<double> alog(hv), dt(hv);
  for (int64_t h = 0; h < hv; ++h) {
    alog[h] = std::log(rng.uniform(1, 16));
    dt[h] = rng.normal();
  }
  c.inputs = {random_normal(rng, DType::BF16, {T, 2 * hk * dk + hv * dv}, sigma), random_normal(rng, DType::BF16, {T, hv}, 3.0),
              random_normal(rng, DType::BF16, {T, hv}, 8.0), host_tensor(param_type, {hv}, alog), host_tensor(param_type, {hv}, dt)};
  c.outputs = {host_empty(DType::F32, {T, hk, dk}), host_empty(DType::F32, {T, hk, dk}), host_empty(DType::F32, {T, hv, dv}),
               host_empty(DType::F32, {T, hv}), host_empty(DType::F32, {T, hv})};
  return c;
}

Reference prep_reference(const Case& c) {
  return delta_net_prep_reference(tracked_of(c.inputs[0]), tracked_of(c.inputs[1]), tracked_of(c.inputs[2]),
                                  tracked_of(c.inputs[3]), tracked_of(c.inputs[4]), c.outputs[0].dim(1),
                                  c.outputs[0].dim(2), c.outputs[2].dim(1), c.outputs[2].dim(2));
}

void run_prep(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) {
  delta_net_prep(in[0], in[1], in[2], in[3], in[4], out[0], out[1], out[2], out[3], out[4]);
}

}  // namespace

Reference delta_net_prep_reference(const std::vector<Tracked>& mixed, const std::vector<Tracked>& b,
                                   const std::vector<Tracked>& a, const std::vector<Tracked>& alog,
                                   const std::vector<Tracked>& dt, int64_t hk, int64_t dk, int64_t hv, int64_t dv) {
  const int64_t width = 2 * hk * dk + hv * dv, T = static_cast<int64_t>(mixed.size()) / width;
  std::vector<Tracked> q(T * hk * dk), k(T * hk * dk), v(T * hv * dv), beta(T * hv), g(T * hv), sq(dk);
  const Tracked q_scale = exact(f32_of(1 / std::sqrt(static_cast<double>(dk))));
  auto l2 = [&](const Tracked* src, Tracked* dst, bool scaled) {
    for (int64_t i = 0; i < dk; ++i) sq[i] = f32_mul(src[i], src[i]);
    Tracked inv = f32_rsqrt(f32_add(f32_sum(sq), exact(f32_of(1e-6))));
    for (int64_t i = 0; i < dk; ++i) dst[i] = scaled ? f32_mul(f32_mul(src[i], inv), q_scale) : f32_mul(src[i], inv);
  };
  for (int64_t t = 0; t < T; ++t) {
    const Tracked* row = mixed.data() + t * width;
    for (int64_t h = 0; h < hk; ++h) {
      l2(row + h * dk, q.data() + (t * hk + h) * dk, true);
      l2(row + hk * dk + h * dk, k.data() + (t * hk + h) * dk, false);
    }
    for (int64_t i = 0; i < hv * dv; ++i) v[t * hv * dv + i] = row[2 * hk * dk + i];
    for (int64_t h = 0; h < hv; ++h) {
      beta[t * hv + h] = round_bf16_point(f32_sigmoid(b[t * hv + h]));
      g[t * hv + h] = f32_mul(f32_neg(f32_exp(alog[h])), f32_softplus(f32_add(a[t * hv + h], dt[h])));
    }
  }
  return {q, k, v, beta, g};
}

void register_delta_net_prep(bool cuda) {
  KernelContract k;
  k.name = "delta_net_prep";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(rng, 63, 2, 32, 4, 16, DType::F32), make_case(rng, 65, 1, 64, 2, 32, DType::BF16),
                             make_case(rng, 1, 4, 128, 8, 128, DType::F32)};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Tiny rows (the 1e-6 inside the root dominates) and huge ones; softplus past its threshold.
    return std::vector<Case>{make_case(rng, 9, 2, 16, 4, 8, DType::F32, 0x1p-20), make_case(rng, 9, 2, 16, 4, 8, DType::F32, 0x1p40)};
  };
  k.reference = prep_reference;
  k.run = run_prep;
  k.controls = {
      // The older order: q and k normalised in bf16 (then cast): the normalised values carry bf16 rounding.
      perturbed_outputs("bf16-before-l2-norm", [](auto&, std::vector<Tensor>& out) {
        map_values(out[0], bf16_of);
        map_values(out[1], bf16_of);
      }),
      perturbed_outputs("missing-q-scale", [](auto&, std::vector<Tensor>& out) {
        double s = std::sqrt(static_cast<double>(out[0].dim(2)));
        map_values(out[0], [s](double x) { return x * s; });
      }),
      perturbed_outputs("unrounded-beta", [](const std::vector<Tensor>& in, std::vector<Tensor>& out) {
        std::vector<double> b = values_of(in[1]), beta(b.size());
        for (size_t i = 0; i < b.size(); ++i) beta[i] = 1 / (1 + std::exp(-static_cast<float>(b[i])));
        set_values(out[3], beta);
      }),
      perturbed_inputs("bf16-decay-parameters", [](std::vector<Tensor>& in) { map_values(in[3], bf16_of); map_values(in[4], bf16_of); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "tokens=4096 released DeltaNet geometry";
    c.inputs = {shape_only(DType::BF16, {4096, 8192}), shape_only(DType::BF16, {4096, 32}), shape_only(DType::BF16, {4096, 32}),
                shape_only(DType::F32, {32}), shape_only(DType::F32, {32})};
    c.outputs = {shape_only(DType::F32, {4096, 16, 128}), shape_only(DType::F32, {4096, 16, 128}), shape_only(DType::F32, {4096, 32, 128}),
                 shape_only(DType::F32, {4096, 32}), shape_only(DType::F32, {4096, 32})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
