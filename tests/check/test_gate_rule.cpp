// The gate's one rule (check/gate/rule.h): limits from torch bf16's and plain rounding's distances,
// exactly at the limit passes, just over fails, a NaN fails, and the printed summary line.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "check/gate/printer.h"
#include "check/gate/rule.h"
#include "core/bf16.h"

namespace {

using tf::check::Distance;
using namespace tf::check::gate;

Distance dist(double cosine, double row) {
  Distance d;
  d.cosine_error = cosine;
  d.worst_row = row;
  d.worst_row_index = 0;
  return d;
}

TEST(GateRule, LimitIsTwiceTheLargerYardstick) {
  const Verdict v = judge(dist(1e-6, 1e-3), dist(4e-6, 2e-3), dist(2e-6, 3e-3));
  EXPECT_EQ(kLimitFactor, 2.0);
  EXPECT_EQ(v.limit_cosine, 8e-6);  // torch's cosine is the larger
  EXPECT_EQ(v.limit_row, 6e-3);     // rounding's worst row is the larger
  EXPECT_TRUE(v.pass);
  EXPECT_DOUBLE_EQ(v.ratio, std::max(1e-6 / 8e-6, 1e-3 / 6e-3));
}

TEST(GateRule, ExactlyAtTheLimitPassesJustOverFails) {
  const Distance torch = dist(0.25, 0.125), rounding = dist(0.0625, 0.0625);
  const Verdict at = judge(dist(0.5, 0.25), torch, rounding);
  EXPECT_TRUE(at.pass);
  EXPECT_EQ(at.ratio, 1.0);
  EXPECT_FALSE(judge(dist(std::nextafter(0.5, 1.0), 0.25), torch, rounding).pass);
  EXPECT_FALSE(judge(dist(0.5, std::nextafter(0.25, 1.0)), torch, rounding).pass);
  EXPECT_GT(judge(dist(0.5, std::nextafter(0.25, 1.0)), torch, rounding).ratio, 1.0);
}

TEST(GateRule, WithoutTorchTheLimitIsRoundingsAlone) {
  const Verdict v = judge(dist(3e-6, 3e-3), std::nullopt, dist(2e-6, 2e-3));
  EXPECT_FALSE(v.torch.has_value());
  EXPECT_EQ(v.limit_cosine, 4e-6);
  EXPECT_EQ(v.limit_row, 4e-3);
  EXPECT_TRUE(v.pass);
  EXPECT_FALSE(judge(dist(5e-6, 3e-3), std::nullopt, dist(2e-6, 2e-3)).pass);
}

TEST(GateRule, NanOrInfiniteFails) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(judge(dist(nan, 0), dist(1, 1), dist(1, 1)).pass);
  EXPECT_FALSE(judge(dist(0, nan), dist(1, 1), dist(1, 1)).pass);
  Distance not_finite = dist(0, 0);
  not_finite.finite = false;
  EXPECT_FALSE(judge(not_finite, dist(1, 1), dist(1, 1)).pass);
  // a torch yardstick that is not finite cannot widen the limit
  const Verdict v = judge(dist(1e-3, 1e-3), dist(inf, inf), dist(1e-4, 1e-4));
  EXPECT_EQ(v.limit_row, 2e-4);
  EXPECT_FALSE(v.pass);
}

TEST(GateRule, ZeroLimitAllowsOnlyZero) {
  EXPECT_TRUE(judge(dist(0, 0), std::nullopt, dist(0, 0)).pass);
  const Verdict v = judge(dist(0, 1e-30), std::nullopt, dist(0, 0));
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(std::isinf(v.ratio));
}

TEST(GateRule, StepTensorsNaNResultFails) {
  tf::Tensor ref = tf::empty(tf::DType::F32, {2, 3}), ours = tf::empty(tf::DType::F32, {2, 3});
  for (int i = 0; i < 6; ++i) ref.ptr<float>()[i] = ours.ptr<float>()[i] = 1.0f + 0.37f * i;
  EXPECT_TRUE(judge_step(ours, ref, nullptr, Rows::Tokens).pass);
  ours.ptr<float>()[4] = std::nanf("");
  EXPECT_FALSE(judge_step(ours, ref, nullptr, Rows::Tokens).pass);
}

TEST(GateRule, StepRoundingYardstickIsTheReferenceInBf16) {
  tf::Tensor ref = tf::empty(tf::DType::F32, {1, 4}), ours = tf::empty(tf::DType::F32, {1, 4});
  const float v[4] = {1.001f, 2.003f, -3.007f, 0.5f};
  for (int i = 0; i < 4; ++i) {
    ref.ptr<float>()[i] = v[i];
    ours.ptr<float>()[i] = tf::round_bf16(v[i]);  // exactly rounding's distance: at the limit's half
  }
  const Verdict verdict = judge_step(ours, ref, nullptr, Rows::Tokens);
  EXPECT_TRUE(verdict.pass);
  EXPECT_DOUBLE_EQ(verdict.ratio, 0.5);
}

TEST(GatePrinter, SummaryLineStatesEveryContract) {
  GateReport r;
  r.steps.push_back({"a", judge(dist(1, 1), dist(1, 1), dist(0, 0))});
  r.steps.push_back({"b", judge(dist(0, 0), dist(1, 1), dist(0, 0))});
  r.mean_ratio = 0.25;
  r.max_ratio = 0.5;
  r.facts.push_back({"ids", "match", true});
  EXPECT_EQ(summary_line(r, {}), "PASS: 2 steps, ratio to limit mean 0.25 max 0.5, repeat identical, packing -, ids match\n");
  r.repeat_same = false;
  r.packing_same = true;
  EXPECT_EQ(summary_line(r, Plant::parse("repeat")),
            "FAIL: 2 steps, ratio to limit mean 0.25 max 0.5, repeat DIFFERS, packing identical, ids match, planted repeat\n");
  const std::string line = step_line(r.steps[0], 6);
  EXPECT_EQ(line.substr(0, 8), "a       ");
  EXPECT_EQ(line.substr(line.size() - 5), "  ok\n") << line;
  const std::string no_torch = step_line({"c", judge(dist(1, 1), std::nullopt, dist(1, 1))}, 1);
  EXPECT_NE(no_torch.find(" - "), std::string::npos) << no_torch;
}

}  // namespace
