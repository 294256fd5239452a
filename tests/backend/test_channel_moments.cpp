// Per-channel moments on the CPU: against long double sums, written by the convolutions as
// channel_moments of their outputs, read by GroupNorm in place of its passes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/channel_moments.h"
#include "backend/norm/group_norm.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
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
bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data, b.data, a.nbytes()) == 0;
}

TEST(ChannelMoments, MatchLongDoubleSumsAndCatchOneValueLeftOut) {
  const int64_t c = 5, n = 3001;
  Tensor x = random_f32({c, n}, 21, 3.0f);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 40.0f;  // a mean away from zero
  const Tensor m = moments_of(x);
  for (int64_t ch = 0; ch < c; ++ch) {
    long double s = 0, ss = 0, abs_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const long double v = x.ptr<float>()[ch * n + i];
      s += v, ss += v * v, abs_sum += std::fabs(v);
    }
    const double tol_s = 1e-13 * double(abs_sum), tol_ss = 1e-13 * double(ss);
    EXPECT_LE(std::fabs(m.ptr<double>()[2 * ch] - double(s)), tol_s) << "channel " << ch;
    EXPECT_LE(std::fabs(m.ptr<double>()[2 * ch + 1] - double(ss)), tol_ss) << "channel " << ch;
    // the control: one value left out is far outside those bounds
    const long double last = x.ptr<float>()[ch * n + n - 1];
    EXPECT_GT(std::fabs(double(s - last) - double(s)), 100 * tol_s);
    EXPECT_GT(std::fabs(double(ss - last * last) - double(ss)), 100 * tol_ss);
  }
}

TEST(ChannelMoments, ConvolutionsWriteTheirOutputsMoments) {
  const Tensor x = random_f32({6, 9, 7}, 31), w = random_bf16({5, 6, 3, 3}, 32, 0.2f), b = random_bf16({5}, 33);
  const Tensor g = random_bf16({6}, 34), beta = random_bf16({6}, 35), r = random_f32({5, 9, 7}, 36);
  Tensor y = tf::empty(DType::F32, {5, 9, 7}), m = tf::empty(DType::F64, {5, 2});
  tf::conv2d(x, w, b, {}, y, &r, &m);
  EXPECT_TRUE(same_bytes(m, moments_of(y))) << "conv2d";
  Tensor plain = tf::empty(DType::F32, {5, 9, 7});
  tf::conv2d(x, w, b, {}, plain, &r);
  EXPECT_TRUE(same_bytes(plain, y)) << "conv2d's output changed by its moments";
  Tensor up = tf::empty(DType::F32, {5, 18, 14}), mu = tf::empty(DType::F64, {5, 2});
  tf::upsample_nearest2x_conv2d(x, w, b, {}, up, nullptr, &mu);
  EXPECT_TRUE(same_bytes(mu, moments_of(up))) << "upsample_nearest2x_conv2d";
  Tensor gy = tf::empty(DType::F32, {5, 9, 7}), gm = tf::empty(DType::F64, {5, 2});
  tf::group_norm_conv2d(x, g, beta, 3, 1e-6f, true, w, b, {}, gy, &r, nullptr, &gm);
  EXPECT_TRUE(same_bytes(gm, moments_of(gy))) << "group_norm_conv2d";
}

// Statistics from the moments: within fp32 of the float64 GroupNorm, with a mean far from zero.
TEST(ChannelMoments, GroupNormFromMomentsMatchesFloat64) {
  for (bool silu : {false, true}) {
    const int64_t c = 12, h = 7, w = 9;
    const int groups = 4;
    Tensor x = random_f32({c, h, w}, 11, 3.0f), g = random_bf16({c}, 12), b = random_bf16({c}, 13);
    for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 100.0f;
    const Tensor m = moments_of(x);
    Tensor y = tf::empty(DType::F32, {c, h, w});
    tf::group_norm(x, g, b, groups, 1e-6f, silu, y, &m);
    const int64_t gs = (c / groups) * h * w;
    for (int grp = 0; grp < groups; ++grp) {
      const float* xs = x.ptr<float>() + grp * gs;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < gs; ++i) mean += xs[i];
      mean /= gs;
      for (int64_t i = 0; i < gs; ++i) var += (xs[i] - mean) * (xs[i] - mean);
      var /= gs;
      for (int64_t i = 0; i < gs; ++i) {
        const int64_t ch = grp * (c / groups) + i / (h * w);
        const double gamma = tf::float_from_bf16_bits(g.ptr<uint16_t>()[ch]);
        const double beta = tf::float_from_bf16_bits(b.ptr<uint16_t>()[ch]);
        double ref = (xs[i] - mean) / std::sqrt(var + 1e-6) * gamma + beta;
        if (silu) ref = ref / (1.0 + std::exp(-ref));
        ASSERT_NEAR(y.ptr<float>()[grp * gs + i], ref, 4e-7 * (std::fabs(ref) + 1.0)) << "silu " << silu;
      }
    }
  }
}

TEST(ChannelMoments, GroupNormConv2dFromMomentsGivesTheTwoOpsBytes) {
  const Tensor x = random_f32({8, 6, 5}, 41, 2.0f), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  const Tensor w = random_bf16({5, 8, 3, 3}, 44, 0.2f), bias = random_bf16({5}, 45), r = random_f32({5, 6, 5}, 46);
  const Tensor m = moments_of(x);
  Tensor t = tf::empty(DType::F32, {8, 6, 5}), want = tf::empty(DType::F32, {5, 6, 5});
  tf::group_norm(x, g, b, 4, 1e-6f, true, t, &m);
  tf::conv2d(t, w, bias, {}, want, &r);
  Tensor got = tf::empty(DType::F32, {5, 6, 5});
  tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, got, &r, &m);
  EXPECT_TRUE(same_bytes(got, want));
}

TEST(ChannelMoments, BadMomentsAreRefusedByName) {
  const Tensor x = random_f32({8, 6, 5}, 41), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  const Tensor w = random_bf16({5, 8, 3, 3}, 44), bias = random_bf16({5}, 45);
  Tensor y = tf::empty(DType::F32, {5, 6, 5}), t = tf::empty(DType::F32, {8, 6, 5});
  Tensor short_m = tf::empty(DType::F64, {4, 2}), f32_m = tf::empty(DType::F32, {5, 2}), x_m = tf::empty(DType::F64, {7, 2});
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const tf::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { tf::conv2d(x, w, bias, {}, y, nullptr, &short_m); }).find("y_moments"), std::string::npos);
  EXPECT_NE(message([&] { tf::conv2d(x, w, bias, {}, y, nullptr, &f32_m); }).find("y_moments"), std::string::npos);
  EXPECT_NE(message([&] { tf::group_norm(x, g, b, 4, 1e-6f, true, t, &x_m); }).find("x_moments"), std::string::npos);
  EXPECT_NE(message([&] { tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, y, nullptr, &x_m); })
                .find("x_moments"),
            std::string::npos);
  EXPECT_NE(message([&] { tf::channel_moments(x, short_m); }).find("channel_moments"), std::string::npos);
}

}  // namespace
