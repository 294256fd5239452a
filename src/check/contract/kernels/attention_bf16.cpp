// attention_causal_gqa with torch eager's rounding points, per query row over its causal keys:
//   s_j = bf16(bf16(fp32 dot(q, k_j)) * scale);  m = max s_j (exact: the s_j are the same bf16 values);
//   t_j = exp(s_j - m); l = fp32 sum t_j (a streaming first pass adds up to n - 1 rescales, 5u each);
//   p_j = bf16(t_j / l) (division, or multiplication by 1 / l: modelled as the latter, 2 roundings);
//   o = bf16(fp32 dot(p, v)).
#include "backend/attention/attention.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: scale, offsets
Case make_case(Tensor q, Tensor k, Tensor v, const SeqOffsets& o, std::string what) {
  Case c;
  c.label = what + " " + label({{"tokens", q.dim(0)}, {"q_heads", q.dim(1)}, {"kv_heads", k.dim(1)}, {"head_dim", q.dim(2)}}) +
            " " + offsets_label(o);
  c.outputs = {host_empty(DType::BF16, q.shape)};
  c.params = {f32_of(1 / std::sqrt(static_cast<double>(q.dim(2))))};
  append_offsets(c.params, o);
  c.inputs = {std::move(q), std::move(k), std::move(v)};
  return c;
}

Case random_case(Rng& rng, int64_t t, int64_t hq, int64_t hkv, int64_t d, SeqOffsets o, double sigma = 1.0) {
  return make_case(random_normal(rng, DType::BF16, {t, hq, d}, sigma), random_normal(rng, DType::BF16, {t, hkv, d}, sigma),
                   random_normal(rng, DType::BF16, {t, hkv, d}), o, "random");
}

Reference gqa_reference(const Case& c) {
  const int64_t Hq = c.inputs[0].dim(1), d = c.inputs[0].dim(2), Hkv = c.inputs[1].dim(1), group = Hq / Hkv;
  const Tracked scale = exact(f32_of(c.params[0]));
  SeqOffsets o = offsets_from(c.params, 1);
  std::vector<Tracked> q = tracked_of(c.inputs[0]), k = tracked_of(c.inputs[1]), v = tracked_of(c.inputs[2]);
  std::vector<Tracked> out(q.size()), s, t, pv;
  for (size_t sq = 0; sq + 1 < o.size(); ++sq)
    for (int64_t ti = o[sq]; ti < o[sq + 1]; ++ti)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / group, n = ti - o[sq] + 1;
        std::span<const Tracked> qi(q.data() + (ti * Hq + h) * d, static_cast<size_t>(d));
        s.assign(n, {});
        double m = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          std::span<const Tracked> kj(k.data() + ((o[sq] + j) * Hkv + hk) * d, static_cast<size_t>(d));
          s[j] = round_bf16_point(f32_mul(round_bf16_point(f32_dot(qi, kj)), scale));
          m = std::fmax(m, s[j].v);
        }
        // The kernel's maximum is one of its own scores: off by at most the largest score allowance.
        Tracked mx{m, 0};
        for (const Tracked& x : s) mx.e = std::fmax(mx.e, x.e);
        t.assign(n, {});
        std::vector<Tracked> for_sum(n);
        const double rescale = 5.0 * static_cast<double>(n - 1) * kU32;
        for (int64_t j = 0; j < n; ++j) {
          t[j] = f32_exp(f32_sub(s[j], mx));
          for_sum[j] = {t[j].v, t[j].e + rescale * (std::fabs(t[j].v) + t[j].e)};
        }
        Tracked inv_l = f32_div(exact(1.0), f32_sum(for_sum));
        for (int64_t j = 0; j < n; ++j) t[j] = round_bf16_point(f32_mul(t[j], inv_l));
        for (int64_t i = 0; i < d; ++i) {
          pv.assign(n, {});
          for (int64_t j = 0; j < n; ++j) pv[j] = v[((o[sq] + j) * Hkv + hk) * d + i];
          out[(ti * Hq + h) * d + i] = round_bf16_point(f32_dot(t, pv));
        }
      }
  return {out};
}

// Eager attention with a planted fault: 1 fp32 probabilities (no bf16 rounding), 2 kv head h % Hkv
// (tiled, not grouped), 3 not causal (every key of the sequence), 4 unrounded scores.
void faulty_gqa(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, int fault) {
  const int64_t Hq = in[0].dim(1), d = in[0].dim(2), Hkv = in[1].dim(1), group = Hq / Hkv;
  const float scale = static_cast<float>(p[0]);
  SeqOffsets o = offsets_from(p, 1);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), y(q.size());
  for (size_t sq = 0; sq + 1 < o.size(); ++sq)
    for (int64_t ti = o[sq]; ti < o[sq + 1]; ++ti)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = fault == 2 ? h % Hkv : h / group, n = fault == 3 ? o[sq + 1] - o[sq] : ti - o[sq] + 1;
        std::vector<float> pr(n);
        float m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) {
          float dot = 0;
          for (int64_t i = 0; i < d; ++i)
            dot += static_cast<float>(q[(ti * Hq + h) * d + i]) * static_cast<float>(k[((o[sq] + j) * Hkv + hk) * d + i]);
          pr[j] = fault == 4 ? dot * scale : static_cast<float>(bf16_of(static_cast<float>(bf16_of(dot)) * scale));
          m = std::max(m, pr[j]);
        }
        for (float& x : pr) l += (x = std::exp(x - m));
        for (float& x : pr) x = fault == 1 ? x / l : static_cast<float>(bf16_of(x / l));
        for (int64_t i = 0; i < d; ++i) {
          float acc = 0;
          for (int64_t j = 0; j < n; ++j) acc += pr[j] * static_cast<float>(v[((o[sq] + j) * Hkv + hk) * d + i]);
          y[(ti * Hq + h) * d + i] = acc;
        }
      }
  set_values(out[0], y);
}

HostKernel with(int fault) {
  return [fault](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) { faulty_gqa(in, out, p, fault); };
}

}  // namespace

void register_attention_bf16(bool cuda) {
  KernelContract k;
  k.name = "attention_bf16_causal";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{random_case(rng, 63, 4, 1, 32, {0, 63}), random_case(rng, 65, 4, 2, 16, {0, 64, 65}),
                             random_case(rng, 64, 2, 2, 64, {0, 64}), random_case(rng, 40, 8, 2, 8, {0, 1, 1, 40})};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Scores up to ~1e3 (exp underflows for all but a few keys) and equal keys (a flat softmax).
    std::vector<Case> cs{random_case(rng, 48, 2, 1, 16, {0, 48}, 6.0)};
    cs.back().label = "peaked " + cs.back().label;
    cs.push_back(with_equal_keys(random_case(rng, 33, 2, 1, 8, {0, 33})));
    return cs;
  };
  k.reference = gqa_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    attention(in[0], in[1], in[2], {.scale = static_cast<float>(p[0]), .sequences = offsets_from(p, 1)}, out[0]);
  };
  k.controls = {
      reimplemented("fp32-probabilities", with(1)),
      reimplemented("tiled-kv-heads", with(2)),
      reimplemented("not-causal", with(3)),
      reimplemented("unrounded-scores", with(4)),
      perturbed_params("dropped-scale", [](Params& p) { p[0] = 1; }),
  };
  k.limit_cases = [] {
    std::vector<Case> cs;
    for (int64_t t : {1, 65, 4096}) {
      Case c;
      c.label = label({{"tokens", t}, {"q_heads", 16}, {"kv_heads", 4}, {"head_dim", 256}});
      c.inputs = {shape_only(DType::BF16, {t, 16, 256}), shape_only(DType::BF16, {t, 4, 256}), shape_only(DType::BF16, {t, 4, 256})};
      c.outputs = {shape_only(DType::BF16, {t, 16, 256})};
      c.params = {1.0 / 16};
      append_offsets(c.params, single_sequence(t));
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
