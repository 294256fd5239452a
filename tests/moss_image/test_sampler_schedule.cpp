// The official schedule: sigmas and timesteps bit for bit against kohakumoss's moss_sigmas (which
// the MLX port's sigmas_for matches), torch's linspace, and refusals by name
// (tests/data/sampler/schedule.safetensors, written by python/cases/sampler_data.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "families/moss_image/sampler/schedule.h"
#include "io/safetensors.h"
#include "support/error_message.h"

using namespace tf;
using namespace tf::moss_image;
using tf::test_support::error_message;

namespace {

const std::string kData = std::string(TF_TEST_DATA) + "/sampler/schedule.safetensors";

// The first index where `got` and the stored F32 vector differ in bits or length, or -1.
int64_t first_difference(const std::vector<float>& got, const Tensor& want) {
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(got.size()), want.numel());
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(&got[static_cast<size_t>(i)], want.ptr<float>() + i, 4) != 0) return i;
  return static_cast<int64_t>(got.size()) == want.numel() ? -1 : n;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

// 184 (steps, shift) pairs: steps 1..250 with shifts 0.001..1000; 999, 1000, 1001, 2000 at
// shifts 1 and 5; and six where a sigma ties between two training sigmas or where a double-precision
// shift would snap elsewhere.
TEST(SamplerSchedule, SigmasMatchReferenceBits) {
  const auto f = SafetensorsFile::open(kData);
  const auto pairs = nlohmann::json::parse(f->metadata().at("pairs"));
  ASSERT_EQ(pairs.size(), 184u);
  for (size_t k = 0; k < pairs.size(); ++k) {
    const int64_t steps = pairs[k][0].get<int64_t>();
    const double shift = std::stod(pairs[k][1].get<std::string>());
    const std::vector<float> got = schedule_sigmas(steps, shift);
    EXPECT_EQ(first_difference(got, f->get("sigmas." + std::to_string(k))), -1)
        << "steps " << steps << " shift " << shift;
  }
}

TEST(SamplerSchedule, TimestepsMatchReferenceBits) {
  const auto f = SafetensorsFile::open(kData);
  const auto pairs = nlohmann::json::parse(f->metadata().at("pairs"));
  const auto ks = nlohmann::json::parse(f->metadata().at("timesteps"));
  ASSERT_GT(ks.size(), 30u);
  for (const auto& kj : ks) {
    const size_t k = kj.get<size_t>();
    const int64_t steps = pairs[k][0].get<int64_t>();
    const double shift = std::stod(pairs[k][1].get<std::string>());
    const std::vector<float> got = schedule_timesteps(schedule_sigmas(steps, shift));
    EXPECT_EQ(first_difference(got, f->get("timesteps." + std::to_string(k))), -1)
        << "steps " << steps << " shift " << shift;
  }
}

// The shifted grid before snapping, where an fp32-versus-double shift shows in every value.
TEST(SamplerSchedule, ShiftedGridMatchesReferenceBits) {
  const auto f = SafetensorsFile::open(kData);
  const auto grids = nlohmann::json::parse(f->metadata().at("grids"));
  ASSERT_EQ(grids.size(), 6u);
  for (size_t k = 0; k < grids.size(); ++k) {
    const int64_t n = grids[k][0].get<int64_t>();
    const double shift = std::stod(grids[k][1].get<std::string>());
    EXPECT_EQ(first_difference(shifted_sigmas(n, shift), f->get("grid." + std::to_string(k))), -1)
        << "count " << n << " shift " << shift;
  }
}

TEST(SamplerSchedule, LinspaceMatchesTorch) {
  const auto f = SafetensorsFile::open(kData);
  const auto spaces = nlohmann::json::parse(f->metadata().at("linspaces"));
  for (size_t k = 0; k < spaces.size(); ++k) {
    const float a = static_cast<float>(std::stod(spaces[k][0].get<std::string>()));
    const float b = static_cast<float>(std::stod(spaces[k][1].get<std::string>()));
    const int64_t n = spaces[k][2].get<int64_t>();
    EXPECT_EQ(first_difference(torch_linspace_f32(a, b, n), f->get("linspace." + std::to_string(k))), -1)
        << "linspace(" << a << ", " << b << ", " << n << ")";
  }
}

// The defaults as references.md lists them: 50 steps at shift 5 keep all 50 (1, 0.996, 0.992,
// 0.987, ..., 0.193, 0.115, 0.024, then 0); 250 keep 246 and 1000 keep 615; timesteps not integers.
TEST(SamplerSchedule, DefaultsAsDocumented) {
  const std::vector<float> s = schedule_sigmas(50, 5.0);
  ASSERT_EQ(s.size(), 51u);
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.996f);
  EXPECT_EQ(s[2], 0.992f);
  EXPECT_EQ(s[3], 0.987f);
  EXPECT_EQ(s[47], 0.193f);
  EXPECT_EQ(s[48], 0.115f);
  EXPECT_EQ(s[49], 0.024f);
  EXPECT_EQ(s[50], 0.0f);
  EXPECT_EQ(schedule_sigmas(250, 5.0).size(), 247u);
  EXPECT_EQ(schedule_sigmas(1000, 5.0).size(), 616u);
  const std::vector<float> t = schedule_timesteps(s);
  ASSERT_EQ(t.size(), 50u);
  EXPECT_EQ(t[0], 1000.0f);
  int non_integer = 0;
  for (float x : t) non_integer += x != std::round(x);
  EXPECT_GT(non_integer, 0);
}

TEST(SamplerSchedule, RefusalsNameTheParameter) {
  for (int64_t steps : {int64_t{0}, int64_t{-3}, kMaxSampleSteps + 1})
    EXPECT_TRUE(contains(error_message([&] { schedule_sigmas(steps, 5.0); }), "expected steps in [1, 100000], got " + std::to_string(steps)));
  for (double shift : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    EXPECT_TRUE(contains(error_message([&] { schedule_sigmas(50, shift); }), "expected shift finite and > 0"))
        << shift;
  EXPECT_TRUE(contains(error_message([] { shifted_sigmas(5, -2.0); }), "shifted_sigmas: expected shift finite and > 0"));
  EXPECT_TRUE(contains(error_message([] { schedule_timesteps({}); }), "expected the sigmas"));
  EXPECT_TRUE(contains(error_message([] { torch_linspace_f32(1, 0, 0); }), "expected count in [1, 2^24]"));
}
