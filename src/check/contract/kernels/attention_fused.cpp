// attention with the fused numerics (tokens, heads; mask none or causal), one rounding at the end:
//   s_j = fp32 dot(q, k_j) * scale (fp32);  m = max s_j (one of the kernel's own scores);
//   e_j = exp(s_j - m);  l = fp32 sum e_j;  o = bf16(fp32 dot(e, v) / l),
// e_j in the value sum may be bf16 and carry an online softmax's rescaling (a flash kernel's steps).
#include "backend/attention/attention.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: scale, causal (0 or 1), offsets
Case make_case(Rng& rng, int64_t t, int64_t hq, int64_t hkv, int64_t d, bool causal, SeqOffsets o, double sigma = 1.0) {
  Case c;
  c.label = std::string(causal ? "causal " : "mask none ") +
            label({{"tokens", t}, {"q_heads", hq}, {"kv_heads", hkv}, {"head_dim", d}}) + " " + offsets_label(o);
  c.inputs = {random_normal(rng, DType::BF16, {t, hq, d}, sigma), random_normal(rng, DType::BF16, {t, hkv, d}, sigma),
              random_normal(rng, DType::BF16, {t, hkv, d})};
  c.outputs = {host_empty(DType::BF16, {t, hq, d})};
  c.params = {f32_of(1 / std::sqrt(static_cast<double>(d))), causal ? 1.0 : 0.0};
  append_offsets(c.params, o);
  return c;
}

// What a tensor-core kernel may do beyond the CPU's steps, each an allowance on e:
// exp(s - m) evaluated as exp2 of scores scaled by one fp32 constant scale * log2(e) (the argument
// off by up to 3u (|s| + |m|));
Tracked exp2_argument(Tracked arg, Tracked s, Tracked m) {
  arg.e += 3 * kU32 * (std::fabs(s.v) + std::fabs(m.v));
  return arg;
}
// e rescaled once a key tile of 64 or more by the running maximum's change (an exp and a product, 4u each);
double rescales(int64_t n) { return static_cast<double>(n / 64 + 1) * 8 * kU32; }
// e rounded to bf16 as the value product's operand (|bf16(x) - x| <= 2^-8 |x|).
Tracked bf16_operand(Tracked x) { return {x.v, x.e + 0x1p-8 * (std::fabs(x.v) + x.e)}; }

Reference fused_reference(const Case& c) {
  const int64_t Hq = c.inputs[0].dim(1), d = c.inputs[0].dim(2), Hkv = c.inputs[1].dim(1), group = Hq / Hkv;
  const Tracked scale = exact(f32_of(c.params[0]));
  const bool causal = c.params[1] != 0;
  const SeqOffsets o = offsets_from(c.params, 2);
  std::vector<Tracked> q = tracked_of(c.inputs[0]), k = tracked_of(c.inputs[1]), v = tracked_of(c.inputs[2]);
  std::vector<Tracked> out(q.size()), s, e, eb, pv;
  for (size_t sq = 0; sq + 1 < o.size(); ++sq)
    for (int64_t ti = o[sq]; ti < o[sq + 1]; ++ti)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / group, n = causal ? ti - o[sq] + 1 : o[sq + 1] - o[sq];
        std::span<const Tracked> qi(q.data() + (ti * Hq + h) * d, static_cast<size_t>(d));
        s.assign(n, {});
        Tracked mx{-INFINITY, 0};
        for (int64_t j = 0; j < n; ++j) {
          std::span<const Tracked> kj(k.data() + ((o[sq] + j) * Hkv + hk) * d, static_cast<size_t>(d));
          s[j] = f32_mul(f32_dot(qi, kj), scale);
          mx.v = std::fmax(mx.v, s[j].v);
          mx.e = std::fmax(mx.e, s[j].e);  // the kernel's maximum is one of its own scores
        }
        e.assign(n, {});
        eb.assign(n, {});
        for (int64_t j = 0; j < n; ++j) {
          e[j] = f32_exp(exp2_argument(f32_sub(s[j], mx), s[j], mx));
          e[j].e += std::fabs(e[j].v) * rescales(n);
          eb[j] = bf16_operand(e[j]);
        }
        const Tracked l = f32_sum(e);
        for (int64_t i = 0; i < d; ++i) {
          pv.assign(n, {});
          for (int64_t j = 0; j < n; ++j) pv[j] = v[((o[sq] + j) * Hkv + hk) * d + i];
          out[(ti * Hq + h) * d + i] = round_bf16_point(f32_div(f32_dot(eb, pv), l));
        }
      }
  return {out};
}

AttentionOptions options_of(const Params& p, bool flip_mask = false) {
  const bool causal = (p[1] != 0) != flip_mask;
  return {.scale = static_cast<float>(p[0]), .mask = causal ? AttentionMask::causal : AttentionMask::none,
          .sequences = offsets_from(p, 2), .numerics = AttentionNumerics::fused};
}

}  // namespace

void register_attention_fused(bool cuda) {
  KernelContract k;
  k.name = "attention_fused";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(rng, 37, 2, 2, 32, false, {0, 30, 37}), make_case(rng, 40, 4, 1, 16, false, {0, 40}),
                             make_case(rng, 33, 4, 2, 8, true, {0, 1, 1, 33}), make_case(rng, 64, 2, 2, 128, false, {0, 64}),
                             // CUDA's tiles of 128 queries and keys: partial, packed, grouped heads
                             make_case(rng, 300, 2, 2, 128, false, {0, 130, 300}),
                             make_case(rng, 257, 4, 2, 64, false, {0, 257})};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Scores up to ~1e3 (exp underflows for all but a few keys) and equal keys (a flat softmax).
    std::vector<Case> cs{make_case(rng, 48, 2, 1, 16, false, {0, 48}, 6.0)};
    cs.back().label = "peaked " + cs.back().label;
    cs.push_back(with_equal_keys(make_case(rng, 33, 2, 1, 8, false, {0, 33})));
    return cs;
  };
  k.reference = fused_reference;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    attention(in[0], in[1], in[2], options_of(p), out[0]);
  };
  k.controls = {
      reimplemented("eager-roundings",
                    [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
                      AttentionOptions o = options_of(p);
                      o.numerics = AttentionNumerics::eager_bf16;
                      attention(in[0], in[1], in[2], o, out[0]);
                    }),
      reimplemented("other-mask",
                    [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
                      attention(in[0], in[1], in[2], options_of(p, true), out[0]);
                    }),
      perturbed_params("dropped-scale", [](Params& p) { p[0] = 1; }),
      perturbed_inputs("swapped-k-and-v", [](std::vector<Tensor>& in) { std::swap(in[1], in[2]); }),
  };
  k.limit_cases = [] {
    std::vector<Case> cs;
    for (int64_t t : {1, 300}) {
      Case c;
      c.label = label({{"tokens", t}, {"q_heads", 24}, {"kv_heads", 24}, {"head_dim", 128}});
      c.inputs = {shape_only(DType::BF16, {t, 24, 128}), shape_only(DType::BF16, {t, 24, 128}), shape_only(DType::BF16, {t, 24, 128})};
      c.outputs = {shape_only(DType::BF16, {t, 24, 128})};
      c.params = {1.0 / std::sqrt(128.0), 0.0};
      append_offsets(c.params, single_sequence(t));
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
