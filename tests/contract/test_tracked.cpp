// The rounding model: its roundings agree with the bit-level ones, and the bounds it derives hold
// for real fp32 computations in different orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "check/contract/inputs.h"
#include "check/contract/tracked.h"
#include "core/bf16.h"

using namespace tf;
using namespace tf::contract;

TEST(Tracked, Bf16RoundingMatchesTheBitLevelRounding) {
  Rng rng(1);
  for (int i = 0; i < 200000; ++i) {
    float f = static_cast<float>(rng.normal() * std::ldexp(1.0, static_cast<int>(rng.below(60)) - 30));
    EXPECT_EQ(bf16_of(f), static_cast<double>(round_bf16(f))) << f;
  }
  // Ties go to even, the largest finite value rounds up to infinity as torch does.
  EXPECT_EQ(bf16_of(1.0 + 0x1p-8), 1.0);
  EXPECT_EQ(bf16_of(1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
  EXPECT_TRUE(std::isinf(bf16_of(3.4e38)));
  EXPECT_EQ(bf16_of(0x1p-133), 0x1p-133);  // the smallest bf16 subnormal
}

TEST(Tracked, F16Rounding) {
  EXPECT_EQ(f16_of(1.0 + 0x1p-11), 1.0);
  EXPECT_EQ(f16_of(65504.0), 65504.0);
  EXPECT_TRUE(std::isinf(f16_of(65520.0)));
  EXPECT_EQ(f16_of(0x1p-25), 0.0);  // half the smallest subnormal: ties to even (zero)
}

TEST(Tracked, ExactOperationsCarryNoAllowance) {
  // Products of two bf16 values are exact in fp32.
  Tracked p = f32_mul(exact(bf16_of(1.2345)), exact(bf16_of(-7.89)));
  EXPECT_EQ(p.e, 0.0);
  // 1 + 2^-30 is not an fp32 value: the sum carries one rounding.
  Tracked s = f32_add(exact(1.0), exact(0x1p-30));
  EXPECT_GT(s.e, 0.0);
  EXPECT_LE(s.e, 2 * kU32 * 1.0000001);
}

TEST(Tracked, SumBoundHoldsForEveryOrder) {
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + static_cast<int>(rng.below(3000));
    std::vector<float> x(n);
    for (float& v : x) v = static_cast<float>(rng.normal() * std::exp(3 * rng.normal()));
    Tracked t = f32_sum(exact_values(x));
    float forward = 0, backward = 0;
    for (int i = 0; i < n; ++i) forward += x[i];
    for (int i = n - 1; i >= 0; --i) backward += x[i];
    std::vector<float> pw(x);
    while (pw.size() > 1) {  // pairwise
      std::vector<float> next;
      for (size_t i = 0; i + 1 < pw.size(); i += 2) next.push_back(pw[i] + pw[i + 1]);
      if (pw.size() % 2) next.push_back(pw.back());
      pw = next;
    }
    for (float got : {forward, backward, pw[0]}) EXPECT_LE(std::fabs(got - t.v), t.e) << n;
  }
}

TEST(Tracked, SumBoundIsNotLoose) {
  // A sum whose terms are all equal grows its error linearly: the bound is attained within a
  // small factor, so it is not a tuned tolerance far above real errors.
  std::vector<float> x(4096, 1.0f + 0x1p-20f);
  Tracked t = f32_sum(exact_values(x));
  EXPECT_LT(t.e, 4096 * 4096 * kU32 * 1.01);
}

TEST(Tracked, FunctionBoundsHold) {
  Rng rng(3);
  for (int i = 0; i < 20000; ++i) {
    float x = static_cast<float>(rng.normal() * 6);
    Tracked tx = exact(x);
    Tracked e = f32_exp(tx);
    EXPECT_LE(std::fabs(std::exp(x) - e.v), e.e);
    Tracked s = f32_silu(tx);
    float silu = x / (1.0f + std::exp(-x));
    EXPECT_LE(std::fabs(silu - s.v), s.e) << x;
    Tracked sg = f32_sigmoid(tx);
    EXPECT_LE(std::fabs(1.0f / (1.0f + std::exp(-x)) - sg.v), sg.e) << x;
    Tracked sp = f32_softplus(tx);
    float softplus = x > 20 ? x : std::log1p(std::exp(x));
    EXPECT_LE(std::fabs(softplus - sp.v), sp.e) << x;
    float ax = std::fabs(x) + 1e-3f;
    Tracked r = f32_rsqrt(exact(ax));
    EXPECT_LE(std::fabs(1.0f / std::sqrt(ax) - r.v), r.e);
  }
}

TEST(Tracked, InputUncertaintyPassesThroughFunctions) {
  // silu has a minimum inside [-1.5, -1.0]: the bound must cover the dip, not just the ends.
  Tracked t = f32_silu({-1.25, 0.25});
  double lowest = -1.2784645427610738 / (1 + std::exp(1.2784645427610738));
  EXPECT_GE(t.e, std::fabs(lowest - t.v));
}

TEST(Tracked, RoundingPointAllowsOnlyWhatTheIntervalStraddles) {
  // Far from a tie, a small uncertainty rounds to the same bf16 value: no allowance.
  Tracked far = round_bf16_point({1.0 + 0x1p-10, 1e-6});
  EXPECT_EQ(far.v, 1.0);
  EXPECT_EQ(far.e, 0.0);
  // Straddling the tie between 1 and 1 + 2^-7: one bf16 ulp is allowed.
  Tracked near = round_bf16_point({1.0 + 0x1p-8, 1e-6});
  EXPECT_EQ(near.e, 0x1p-7);
}

TEST(Tracked, DivisionByAnUncertainZeroIsUnbounded) {
  Tracked q = f32_div(exact(1.0), {1e-9, 1e-8});
  EXPECT_TRUE(std::isinf(q.e));
}
