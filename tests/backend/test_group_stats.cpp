// GroupNorm statistics taken by the op that writes a picture (group_stats.h), on the CPU: group_norm's own
// numbers, the same bytes downstream as a GroupNorm computing them itself, bad statistics refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/group_norm.h"
#include "backend/norm/group_stats.h"
#include "check/random_tensor.h"
#include "core/error.h"

namespace {

using tf::DType;
using tf::GroupStats;
using tf::Tensor;

using tf::check::random_f32;
using tf::check::random_bf16;
// Group g's mean and 1 / sqrt(var + eps) of y in long double, two passes.
std::pair<long double, long double> exact(const Tensor& y, int groups, float eps, int g) {
  const int64_t n = y.numel() / groups;
  const float* p = y.ptr<float>() + g * n;
  long double m = 0, v = 0;
  for (int64_t i = 0; i < n; ++i) m += p[i];
  m /= n;
  for (int64_t i = 0; i < n; ++i) v += (p[i] - m) * (p[i] - m);
  return {m, 1.0L / std::sqrt(v / n + eps)};
}

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const tf::Error& e) {
    return e.what();
  }
  return "no error";
}

// conv2d's and upsample_nearest2x_conv2d's y_stats: the statistics of y as group_stats takes them, within
// fp64 rounding of the exact ones (an offset of 50 tests that the variance is not a difference of squares).
TEST(GroupStats, TakenByTheWritingOpAreGroupStatsOfItsOutput) {
  Tensor x = random_f32({8, 6, 7}, 1, 2.0f), w = random_bf16({12, 8, 3, 3}, 2, 0.2f), bias = random_bf16({12}, 3);
  for (int64_t i = 0; i < bias.numel(); ++i) bias.ptr<uint16_t>()[i] = 0x4248;  // 50.0 in bf16
  for (bool up : {false, true}) {
    Tensor y = tf::empty(DType::F32, {12, up ? 12 : 6, up ? 14 : 7});
    GroupStats taken = tf::make_group_stats(4, 1e-6f, tf::Device::CPU);
    if (up) tf::upsample_nearest2x_conv2d(x, w, bias, {}, y, nullptr, &taken);
    else tf::conv2d(x, w, bias, {}, y, nullptr, &taken);
    GroupStats again = tf::make_group_stats(4, 1e-6f, tf::Device::CPU);
    tf::group_stats(y, again);
    EXPECT_EQ(std::memcmp(taken.mean_rstd.data, again.mean_rstd.data, again.mean_rstd.nbytes()), 0) << "up " << up;
    for (int g = 0; g < 4; ++g) {
      const auto [m, r] = exact(y, 4, 1e-6f, g);
      EXPECT_NEAR(taken.mean_rstd.ptr<double>()[2 * g], double(m), 1e-13 * std::fabs(double(m)));
      EXPECT_NEAR(taken.mean_rstd.ptr<double>()[2 * g + 1], double(r), 1e-12 * double(r));
    }
  }
}

// A resnet's chain with the statistics handed on (conv1 takes its output's for norm2, norm2 is given them) gives
// the bytes of the chain whose GroupNorms compute their own.
TEST(GroupStats, GivenToTheGroupNormGiveItsOwnBytes) {
  Tensor x = random_f32({8, 6, 5}, 41, 2.0f), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  Tensor w1 = random_bf16({8, 8, 3, 3}, 44, 0.2f), b1 = random_bf16({8}, 45);
  Tensor w2 = random_bf16({8, 8, 3, 3}, 46, 0.2f), b2 = random_bf16({8}, 47);
  Tensor h = tf::empty(DType::F32, {8, 6, 5}), want = tf::empty(DType::F32, {8, 6, 5});
  tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w1, b1, {}, h);
  tf::group_norm_conv2d(h, g, b, 4, 1e-6f, true, w2, b2, {}, want, &x);
  Tensor h2 = tf::empty(DType::F32, {8, 6, 5}), got = tf::empty(DType::F32, {8, 6, 5});
  GroupStats hs = tf::make_group_stats(4, 1e-6f, tf::Device::CPU);
  tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w1, b1, {}, h2, nullptr, nullptr, nullptr, &hs);
  tf::group_norm_conv2d(h2, g, b, 4, 1e-6f, true, w2, b2, {}, got, &x, nullptr, &hs);
  EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0);
  Tensor n1 = tf::empty(DType::F32, {8, 6, 5}), n2 = tf::empty(DType::F32, {8, 6, 5});
  tf::group_norm(h, g, b, 4, 1e-6f, false, n1);
  tf::group_norm(h, g, b, 4, 1e-6f, false, n2, &hs);
  EXPECT_EQ(std::memcmp(n1.data, n2.data, n1.nbytes()), 0);
}

// Statistics given for other groups or another eps, of the wrong shape or type, or asked of an output whose
// channels their groups do not divide, are refused naming the argument.
TEST(GroupStats, RefusedByNameWhereTheyDoNotFit) {
  Tensor x = random_f32({8, 6, 5}, 41), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  Tensor w = random_bf16({6, 8, 3, 3}, 44), bias = random_bf16({6}, 45), y = tf::empty(DType::F32, {6, 6, 5});
  GroupStats four = tf::make_group_stats(4, 1e-6f, tf::Device::CPU), two = tf::make_group_stats(2, 1e-6f, tf::Device::CPU);
  GroupStats other_eps = tf::make_group_stats(4, 1e-5f, tf::Device::CPU);
  GroupStats wrong_shape{4, 1e-6f, tf::empty(DType::F64, {4, 3})}, wrong_type{4, 1e-6f, tf::empty(DType::F32, {4, 2})};
  auto given = [&](const GroupStats& s) {
    return message_of([&] { tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, y, nullptr, nullptr, &s); });
  };
  EXPECT_NE(given(two).find("x_stats were taken for 2 groups"), std::string::npos) << given(two);
  EXPECT_NE(given(other_eps).find("x_stats"), std::string::npos) << given(other_eps);
  EXPECT_NE(given(wrong_shape).find("x_stats"), std::string::npos) << given(wrong_shape);
  EXPECT_NE(given(wrong_type).find("x_stats"), std::string::npos) << given(wrong_type);
  const std::string four_of_six = message_of([&] { tf::conv2d(x, w, bias, {}, y, nullptr, &four); });
  EXPECT_NE(four_of_six.find("y_stats 4 groups do not divide 6 channels"), std::string::npos) << four_of_six;
  Tensor n = tf::empty(DType::F32, {8, 6, 5});
  const std::string norm = message_of([&] { tf::group_norm(x, g, b, 2, 1e-6f, false, n, &four); });
  EXPECT_NE(norm.find("group_norm: x_stats"), std::string::npos) << norm;
  EXPECT_THROW(tf::make_group_stats(0, 1e-6f, tf::Device::CPU), tf::Error);
}

}  // namespace
