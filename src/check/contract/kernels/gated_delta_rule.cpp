// gated_delta_rule, recurrent, fp32 state S [dk, dv] per (sequence, value head):
//   S = S exp(g);  kv = S^T k;  d = (v - kv) beta;  S = S + k d^T;  o = bf16(S^T q).
// Rounding model. Interval bounds explode through a recurrence, so the state's error is carried as
// a norm: each column j of S evolves on its own, S_j' = A S_j + beta v_j k with
// A = exp(g) (I - beta k k^T), ||A||_2 = exp(g) max(1, |1 - beta ||k||^2|). With E the kernel's
// state error, ||E_j'|| <= ||A||_2 ||E_j|| + L_j + C ||E_j||, where L_j is the step's own rounding
// (the tracked fp32 operations on the exact state: exact operations count zero while E = 0) and
// C = 8u + 2 beta ||k||^2 (gamma(dk) + 4u) bounds how the step's rounding grows with |E|.
// The output o_j = S_j . q then carries ||E_j|| ||q|| (1 + gamma(dk)) besides its own fp32 sum.
#include "check/contract/kernels/gated_delta_rule_model.h"

#include "backend/delta_rule/gated_delta_rule.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

double norm2(const double* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * x[i];
  return std::sqrt(s);
}

}  // namespace

Reference gdr_reference(const Case& c) {
  const int64_t T = c.inputs[0].dim(0), Hk = c.inputs[0].dim(1), dk = c.inputs[0].dim(2), Hv = c.inputs[2].dim(1),
                dv = c.inputs[2].dim(2), group = Hv / Hk;
  SeqOffsets o = offsets_from(c.params, 0);
  std::vector<double> q = values_of(c.inputs[0]), k = values_of(c.inputs[1]), v = values_of(c.inputs[2]),
                      beta = values_of(c.inputs[3]), g = values_of(c.inputs[4]);
  std::vector<Tracked> out(static_cast<size_t>(T * Hv * dv));
  std::vector<Tracked> S1(dk * dv), S2(dk * dv), kt(dk), qt(dk), col(dk);
  std::vector<double> S(dk * dv), eps(dv);
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t h = 0; h < Hv; ++h) {
      const int64_t hk = h / group;
      std::fill(S.begin(), S.end(), 0.0);
      std::fill(eps.begin(), eps.end(), 0.0);
      for (int64_t t = o[s]; t < o[s + 1]; ++t) {
        const double* kp = k.data() + (t * Hk + hk) * dk;
        const double* qp = q.data() + (t * Hk + hk) * dk;
        const double bt = beta[t * Hv + h], gt = g[t * Hv + h];
        for (int64_t i = 0; i < dk; ++i) {
          kt[i] = exact(kp[i]);
          qt[i] = exact(qp[i]);
        }
        bool exact_state = true;
        for (double e : eps) exact_state &= e == 0;
        // A nonzero state error forbids the exact-operation shortcuts: the kernel's operands differ.
        const double tiny = exact_state ? 0.0 : 1e-300;
        const double k2 = norm2(kp, dk) * norm2(kp, dk), qn = norm2(qp, dk);
        const double a = std::exp(gt) * std::fmax(1.0, std::fabs(1 - bt * k2)) * (1 + 1e-15);
        const double C = 8 * kU32 + 2 * bt * k2 * (gamma32(dk) + 4 * kU32);
        Tracked decay = f32_exp(exact(gt));
        for (int64_t i = 0; i < dk * dv; ++i) S1[i] = f32_mul({S[i], tiny}, decay);
        for (int64_t j = 0; j < dv; ++j) {
          for (int64_t i = 0; i < dk; ++i) col[i] = S1[i * dv + j];
          Tracked d = f32_mul(f32_sub(exact(v[(t * Hv + h) * dv + j]), f32_dot(col, kt)), exact(bt));
          double local = 0;
          for (int64_t i = 0; i < dk; ++i) {
            S2[i * dv + j] = f32_add(S1[i * dv + j], f32_mul(kt[i], d));
            local += S2[i * dv + j].e * S2[i * dv + j].e;
          }
          eps[j] = a * eps[j] + std::sqrt(local) + C * eps[j];
          for (int64_t i = 0; i < dk; ++i) col[i] = {S2[i * dv + j].v, eps[j] > 0 ? 1e-300 : 0.0};
          Tracked oj = f32_dot(col, qt);
          oj.e += eps[j] * qn * (1 + gamma32(dk));
          out[(t * Hv + h) * dv + j] = round_bf16_point(oj);
        }
        for (int64_t i = 0; i < dk * dv; ++i) S[i] = S2[i].v;
      }
    }
  return {out};
}

namespace {

// The recurrence on the host with a planted fault: 1 bf16 state, 2 kv heads tiled (h % Hk),
// 3 decay applied after the update, 4 no state reset between sequences.
void faulty_gdr(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, int fault) {
  const int64_t T = in[0].dim(0), Hk = in[0].dim(1), dk = in[0].dim(2), Hv = in[2].dim(1), dv = in[2].dim(2), group = Hv / Hk;
  SeqOffsets o = fault == 4 ? single_sequence(T) : offsets_from(p, 0);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), beta = values_of(in[3]),
                      g = values_of(in[4]), y(static_cast<size_t>(T * Hv * dv));
  std::vector<float> S(dk * dv), d(dv);
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t h = 0; h < Hv; ++h) {
      const int64_t hk = fault == 2 ? h % Hk : h / group;
      std::fill(S.begin(), S.end(), 0.0f);
      for (int64_t t = o[s]; t < o[s + 1]; ++t) {
        const double* kp = k.data() + (t * Hk + hk) * dk;
        const double* qp = q.data() + (t * Hk + hk) * dk;
        const float decay = std::exp(static_cast<float>(g[t * Hv + h])), bt = static_cast<float>(beta[t * Hv + h]);
        if (fault != 3)
          for (float& x : S) x *= decay;
        for (int64_t j = 0; j < dv; ++j) {
          float kv = 0;
          for (int64_t i = 0; i < dk; ++i) kv += S[i * dv + j] * static_cast<float>(kp[i]);
          d[j] = (static_cast<float>(v[(t * Hv + h) * dv + j]) - kv) * bt;
        }
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t j = 0; j < dv; ++j) {
            S[i * dv + j] += static_cast<float>(kp[i]) * d[j];
            if (fault == 1) S[i * dv + j] = static_cast<float>(bf16_of(S[i * dv + j]));
          }
        if (fault == 3)
          for (float& x : S) x *= decay;
        for (int64_t j = 0; j < dv; ++j) {
          float acc = 0;
          for (int64_t i = 0; i < dk; ++i) acc += S[i * dv + j] * static_cast<float>(qp[i]);
          y[(t * Hv + h) * dv + j] = acc;
        }
      }
    }
  set_values(out[0], y);
}

HostKernel with(int fault) {
  return [fault](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) { faulty_gdr(in, out, p, fault); };
}

// Unit-norm fp32 rows (q also scaled by dk^-0.5), as delta_net_prep makes them.
Tensor unit_rows(Rng& rng, int64_t t, int64_t heads, int64_t dk, double scale) {
  std::vector<double> x(static_cast<size_t>(t * heads * dk));
  for (int64_t r = 0; r < t * heads; ++r) {
    double n = 0;
    for (int64_t i = 0; i < dk; ++i) n += (x[r * dk + i] = f32_of(rng.normal())) * x[r * dk + i];
    for (int64_t i = 0; i < dk; ++i) x[r * dk + i] = x[r * dk + i] / std::sqrt(n) * scale;
  }
  return host_tensor(DType::F32, {t, heads, dk}, x);
}

}  // namespace

Case gdr_case(Tensor q, Tensor k, Tensor v, Tensor beta, Tensor g, const SeqOffsets& o, std::string what) {
  Case c;
  c.label = what + " " + label({{"tokens", q.dim(0)}, {"key_heads", q.dim(1)}, {"dk", q.dim(2)}, {"value_heads", v.dim(1)},
                                {"dv", v.dim(2)}}) + " " + offsets_label(o);
  c.outputs = {host_empty(DType::BF16, v.shape)};
  c.inputs = {std::move(q), std::move(k), std::move(v), std::move(beta), std::move(g)};
  append_offsets(c.params, o);
  return c;
}

Case gdr_random_case(Rng& rng, int64_t t, int64_t hk, int64_t dk, int64_t hv, int64_t dv, SeqOffsets o) {
  std::vector<double> beta(t * hv), g(t * hv);
  for (double& b : beta) b = bf16_of(1 / (1 + std::exp(-3 * rng.normal())));
  for (double& x : g) x = f32_of(-std::fabs(rng.normal()) * (rng.below(4) ? 0.3 : 3.0));
  return gdr_case(unit_rows(rng, t, hk, dk, 1 / std::sqrt(static_cast<double>(dk))), unit_rows(rng, t, hk, dk, 1.0),
                  random_normal(rng, DType::F32, {t, hv, dv}), host_tensor(DType::F32, {t, hv}, beta),
                  host_tensor(DType::F32, {t, hv}, g), o, "random");
}

namespace {

// One-hot keys with beta = 1 and no decay write whole rows: row 0 <- j (1 + r 2^-12), row 1 <- 2^20,
// row 2 <- -2^20, row 3 <- 1; then queries read j back alone, j - 1 (fp32-exact only if the
// state keeps j's low bits), and j + 2^20 - 2^20.
Case gdr_one_hot_case() {
  const int64_t T = 7, dk = 8, dv = 4;
  std::vector<double> q(T * dk, 0.0), k(T * dk, 0.0), v(T * dv, 0.0), beta(T, 1.0), g(T, 0.0);
  for (int64_t t = 0; t < 4; ++t) {
    k[t * dk + t] = 1;
    q[t * dk + t] = 1;
    for (int64_t j = 0; j < dv; ++j)
      v[t * dv + j] = t == 0 ? 1 + static_cast<double>(j + 1) * 0x1p-12 : t == 1 ? 0x1p20 : t == 2 ? -0x1p20 : 1.0;
  }
  for (int64_t t = 4; t < T; ++t) {
    k[t * dk + 7] = 1;  // writes zeros to an empty row: the state is unchanged
    q[t * dk + 0] = 1;
    if (t == 5) q[t * dk + 3] = -1;
    if (t == 6) q[t * dk + 1] = q[t * dk + 2] = 1;
  }
  return gdr_case(host_tensor(DType::F32, {T, 1, dk}, q), host_tensor(DType::F32, {T, 1, dk}, k),
                  host_tensor(DType::F32, {T, 1, dv}, v), host_tensor(DType::F32, {T, 1}, beta),
                  host_tensor(DType::F32, {T, 1}, g), single_sequence(T), "one-hot keys j, 2^20, -2^20");
}

}  // namespace

std::vector<Case> gdr_adversarial_cases(Rng& rng) {
  std::vector<Case> cs{gdr_one_hot_case()};
  // Strong decay: the state drops into fp32's subnormal range between tokens.
  Case decay = gdr_random_case(rng, 20, 1, 16, 1, 8, {0, 20});
  map_values(decay.inputs[4], [](double) { return -95.0; });
  decay.label = "decay exp(-95) " + decay.label;
  cs.push_back(decay);
  return cs;
}

std::vector<Control> gdr_controls() {
  return {
      reimplemented("bf16-state", with(1)),
      reimplemented("tiled-kv-heads", with(2)),
      reimplemented("decay-after-update", with(3)),
      reimplemented("no-state-reset-between-sequences", with(4)),
      perturbed_inputs("missing-beta", [](std::vector<Tensor>& in) { map_values(in[3], [](double) { return 1.0; }); }),
  };
}

std::vector<Case> gdr_limit_cases() {
  std::vector<Case> cs;
  for (int64_t t : {1, 64, 65, 4096}) {
    Case c;
    c.label = label({{"tokens", t}}) + " released geometry (16 key heads, 32 value heads, 128 x 128)";
    c.inputs = {shape_only(DType::F32, {t, 16, 128}), shape_only(DType::F32, {t, 16, 128}), shape_only(DType::F32, {t, 32, 128}),
                shape_only(DType::F32, {t, 32}), shape_only(DType::F32, {t, 32})};
    c.outputs = {shape_only(DType::BF16, {t, 32, 128})};
    append_offsets(c.params, single_sequence(t));
    cs.push_back(c);
  }
  return cs;
}

void register_gated_delta_rule(bool cuda) {
  KernelContract k;
  k.name = "gated_delta_rule";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{gdr_random_case(rng, 63, 1, 16, 2, 8, {0, 63}), gdr_random_case(rng, 65, 2, 32, 4, 16, {0, 64, 65}),
                             gdr_random_case(rng, 64, 1, 64, 1, 32, {0, 64}),
                             gdr_random_case(rng, 130, 1, 16, 2, 16, {0, 0, 129, 130}),
                             // dims off the CUDA kernel's fast paths: dk short of its register rows and
                             // no multiple of 4, dv odd and short of a warp's 8 columns
                             gdr_random_case(rng, 37, 1, 50, 2, 7, {0, 37}),
                             gdr_random_case(rng, 21, 2, 100, 2, 12, {0, 9, 21})};
  };
  k.adversarial_cases = gdr_adversarial_cases;
  k.reference = gdr_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    gated_delta_rule(in[0], in[1], in[2], in[3], in[4], offsets_from(p, 0), out[0]);
  };
  k.controls = gdr_controls();
  k.limit_cases = gdr_limit_cases;
  add_kernel(std::move(k));
}

}  // namespace tf::contract
