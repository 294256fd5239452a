// The rounding models admit every correct fp32 implementation, not just the CPU kernel's order: a
// re-implementation with other summation orders and a streaming softmax must pass gates 1-4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "check/contract/inputs.h"
#include "check/contract/kernels/references.h"
#include "check/contract/runner.h"

using namespace tf;
using namespace tf::contract;

namespace {

KernelOutcome run(const KernelContract& k) {
  std::unique_ptr<FILE, int (*)(FILE*)> sink(std::tmpfile(), std::fclose);
  return run_kernel_contract(k, ContractOptions{}, sink.get());
}

// Sums backwards, in fp32.
float dot_backwards(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (size_t i = a.size(); i-- > 0;) s += a[i] * b[i];
  return s;
}

// The gated delta rule with reversed sums and the state update done column by column.
void delta_rule_other_order(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const int64_t T = in[0].dim(0), Hk = in[0].dim(1), dk = in[0].dim(2), Hv = in[2].dim(1), dv = in[2].dim(2);
  SeqOffsets o = offsets_from(p, 0);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), beta = values_of(in[3]),
                      g = values_of(in[4]), y(static_cast<size_t>(T * Hv * dv));
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t h = 0; h < Hv; ++h) {
      const int64_t hk = h / (Hv / Hk);
      std::vector<std::vector<float>> S(dv, std::vector<float>(dk, 0.0f));  // column-major state
      for (int64_t t = o[s]; t < o[s + 1]; ++t) {
        std::vector<float> kt(dk), qt(dk);
        for (int64_t i = 0; i < dk; ++i) {
          kt[i] = static_cast<float>(k[(t * Hk + hk) * dk + i]);
          qt[i] = static_cast<float>(q[(t * Hk + hk) * dk + i]);
        }
        const float decay = std::exp(static_cast<float>(g[t * Hv + h])), bt = static_cast<float>(beta[t * Hv + h]);
        for (int64_t j = 0; j < dv; ++j) {
          for (float& x : S[j]) x *= decay;
          float d = (static_cast<float>(v[(t * Hv + h) * dv + j]) - dot_backwards(S[j], kt)) * bt;
          for (int64_t i = 0; i < dk; ++i) S[j][i] += kt[i] * d;
          y[(t * Hv + h) * dv + j] = dot_backwards(S[j], qt);
        }
      }
    }
  set_values(out[0], y);
}

// Eager GQA with an online (streaming) max and sum in the first pass, reversed sums, and the
// probabilities as exp * (1 / l).
void gqa_other_order(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
  const int64_t Hq = in[0].dim(1), d = in[0].dim(2), Hkv = in[1].dim(1), group = Hq / Hkv;
  const float scale = static_cast<float>(p[0]);
  SeqOffsets o = offsets_from(p, 1);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), y(q.size());
  auto bf = [](float x) { return static_cast<float>(bf16_of(x)); };
  for (size_t sq = 0; sq + 1 < o.size(); ++sq)
    for (int64_t ti = o[sq]; ti < o[sq + 1]; ++ti)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / group, n = ti - o[sq] + 1;
        std::vector<float> s(n), qi(d);
        for (int64_t i = 0; i < d; ++i) qi[i] = static_cast<float>(q[(ti * Hq + h) * d + i]);
        float m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) {
          std::vector<float> kj(d);
          for (int64_t i = 0; i < d; ++i) kj[i] = static_cast<float>(k[((o[sq] + j) * Hkv + hk) * d + i]);
          s[j] = bf(bf(dot_backwards(qi, kj)) * scale);
          float mn = std::max(m, s[j]);
          l = (std::isinf(m) ? 0.0f : l * std::exp(m - mn)) + std::exp(s[j] - mn);  // one rescale per key
          m = mn;
        }
        const float inv = 1.0f / l;
        for (int64_t i = 0; i < d; ++i) {
          float acc = 0;
          for (int64_t j = n; j-- > 0;) acc += bf(std::exp(s[j] - m) * inv) * static_cast<float>(v[((o[sq] + j) * Hkv + hk) * d + i]);
          y[(ti * Hq + h) * d + i] = acc;
        }
      }
  set_values(out[0], y);
}

}  // namespace

TEST(RoundingModels, DeltaRuleAdmitsAnotherCorrectOrder) {
  KernelContract k = registered_kernel("gated_delta_rule");
  k.run = delta_rule_other_order;
  KernelOutcome o = run(k);
  EXPECT_TRUE(o.pass) << (o.problems.empty() ? "" : o.problems[0]);
}

TEST(RoundingModels, EagerAttentionAdmitsAStreamingFirstPass) {
  KernelContract k = registered_kernel("attention_bf16_causal");
  k.run = gqa_other_order;
  KernelOutcome o = run(k);
  EXPECT_TRUE(o.pass) << (o.problems.empty() ? "" : o.problems[0]);
}
