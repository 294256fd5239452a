// Channel moments (channel_moments.h) on the CPU: against long-double sums, handed from a convolution to the
// GroupNorm that reads its output, and refused by name when malformed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/channel_moments.h"
#include "backend/norm/group_norm.h"
#include "check/random_tensor.h"
#include "core/error.h"

namespace {

using tf::DType;
using tf::Tensor;

Tensor random_f32(tf::Shape s, uint32_t seed, float scale = 1.0f) {
  return tf::check::random_normal_tensor(DType::F32, std::move(s), seed, scale);
}
Tensor random_bf16(tf::Shape s, uint32_t seed, float scale = 1.0f) {
  return tf::check::random_normal_tensor(DType::BF16, std::move(s), seed, scale);
}
Tensor moments_of(const Tensor& x) {
  Tensor m = tf::empty(DType::F64, {x.dim(0), 2});
  tf::channel_moments(x, m);
  return m;
}

TEST(ChannelMoments, AreEachChannelsSumAndSumOfSquares) {
  Tensor x = random_f32({5, 37, 29}, 7, 3.0f);
  const float* p = x.ptr<float>();
  for (int64_t i = 0; i < 37 * 29; ++i) x.ptr<float>()[2 * 37 * 29 + i] += 100.f;  // a channel far off zero
  const Tensor m = moments_of(x);
  for (int64_t c = 0; c < 5; ++c) {
    long double s = 0, q = 0;
    for (int64_t i = 0; i < 37 * 29; ++i) {
      const long double v = p[c * 37 * 29 + i];
      s += v;
      q += v * v;
    }
    EXPECT_NEAR(m.ptr<double>()[2 * c], double(s), 1e-12 * std::fabs(double(q))) << "channel " << c;
    EXPECT_NEAR(m.ptr<double>()[2 * c + 1], double(q), 1e-13 * double(q)) << "channel " << c;
  }
  EXPECT_EQ(std::memcmp(moments_of(x).data, m.data, m.nbytes()), 0) << "repeat";
}

// The statistics from moments give the two-pass GroupNorm's fp32 values here (mean within a few std).
TEST(ChannelMoments, GroupNormFromMomentsMatchesTheTwoPassNorm) {
  Tensor x = random_f32({8, 16, 12}, 11, 2.0f), g = random_bf16({8}, 12), b = random_bf16({8}, 13);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 1.5f;
  const Tensor m = moments_of(x);
  for (bool silu : {false, true}) {
    Tensor want = tf::empty(DType::F32, x.shape), got = tf::empty(DType::F32, x.shape);
    tf::group_norm(x, g, b, 4, 1e-6f, silu, want);
    tf::group_norm(x, g, b, 4, 1e-6f, silu, got, &m);
    for (int64_t i = 0; i < x.numel(); ++i)
      ASSERT_NEAR(got.ptr<float>()[i], want.ptr<float>()[i], 4e-6f * (1.f + std::fabs(want.ptr<float>()[i])))
          << "silu " << silu << " at " << i;
  }
}

// A convolution's y_moments are channel_moments of its y; the GroupNorm given them is group_norm with them.
TEST(ChannelMoments, ConvolutionsGiveTheirOutputsMoments) {
  Tensor x = random_f32({8, 9, 7}, 21), w = random_bf16({6, 8, 3, 3}, 22, 0.2f), bias = random_bf16({6}, 23);
  Tensor r = random_f32({6, 9, 7}, 24), g = random_bf16({8}, 25), beta = random_bf16({8}, 26);
  Tensor y = tf::empty(DType::F32, {6, 9, 7}), m = tf::empty(DType::F64, {6, 2});
  tf::conv2d(x, w, bias, {}, y, &r, &m);
  EXPECT_EQ(std::memcmp(m.data, moments_of(y).data, m.nbytes()), 0) << "conv2d";
  Tensor u = tf::empty(DType::F32, {6, 18, 14}), mu = tf::empty(DType::F64, {6, 2});
  tf::upsample_nearest2x_conv2d(x, w, bias, {}, u, nullptr, &mu);
  EXPECT_EQ(std::memcmp(mu.data, moments_of(u).data, mu.nbytes()), 0) << "upsample_nearest2x_conv2d";
  const Tensor mx = moments_of(x);
  Tensor t = tf::empty(DType::F32, x.shape), want = tf::empty(DType::F32, {6, 9, 7});
  tf::group_norm(x, g, beta, 4, 1e-6f, true, t, &mx);
  tf::conv2d(t, w, bias, {}, want, &r);
  Tensor got = tf::empty(DType::F32, {6, 9, 7}), mg = tf::empty(DType::F64, {6, 2});
  tf::group_norm_conv2d(x, g, beta, 4, 1e-6f, true, w, bias, {}, got, &r, &mx, &mg);
  EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0) << "group_norm_conv2d";
  EXPECT_EQ(std::memcmp(mg.data, moments_of(want).data, mg.nbytes()), 0) << "group_norm_conv2d's moments";
}

TEST(ChannelMoments, RefusesMalformedMomentsByName) {
  Tensor x = random_f32({8, 4, 4}, 31), g = random_bf16({8}, 32), b = random_bf16({8}, 33);
  Tensor w = random_bf16({6, 8, 3, 3}, 34), bias = random_bf16({6}, 35), y = tf::empty(DType::F32, {6, 4, 4});
  Tensor f32 = tf::empty(DType::F32, {8, 2}), short_m = tf::empty(DType::F64, {7, 2}), ok = moments_of(x);
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const tf::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { tf::channel_moments(x, f32); }).find("m is"), std::string::npos);
  EXPECT_NE(message([&] { tf::group_norm(x, g, b, 4, 1e-6f, true, x, &short_m); }).find("x_moments"),
            std::string::npos);
  EXPECT_NE(message([&] { tf::conv2d(x, w, bias, {}, y, nullptr, &ok); }).find("y_moments"), std::string::npos);
  EXPECT_NE(message([&] {
              tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, y, nullptr, &f32);
            }).find("x_moments"),
            std::string::npos);
}

}  // namespace
