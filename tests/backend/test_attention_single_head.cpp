// Single-head attention with the streaming softmax, against a float64 softmax over the full matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/attention/attention.h"
#include "check/random_tensor.h"
#include "core/error.h"
#include "core/parallel.h"

namespace {

using tf::DType;
using tf::Tensor;

using tf::check::random_f32;
void check_against_float64(int64_t d, int64_t n, double tol);

TEST(AttentionSingleHead, MatchesFloat64AcrossKeyBlocks) { check_against_float64(20, 600, 2e-5); }  // partial blocks
TEST(AttentionSingleHead, OnePositionAndOneBeyondAQueryBlock) {
  check_against_float64(7, 1, 1e-6);
  check_against_float64(13, 97, 1e-5);
}

void check_against_float64(int64_t d, int64_t n, double tol) {
  Tensor q = random_f32({d, n}, 1, 1.5f), k = random_f32({d, n}, 2, 1.5f), v = random_f32({d, n}, 3, 1.0f);
  Tensor o = tf::empty(DType::F32, {d, n});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  tf::attention(q, k, v, {.scale = scale, .mask = tf::AttentionMask::none, .layout = tf::AttentionLayout::channels}, o);
  const float *qp = q.ptr<float>(), *kp = k.ptr<float>(), *vp = v.ptr<float>();
  std::vector<double> s(n);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double m = -1e300;
    for (int64_t j = 0; j < n; ++j) {
      double t = 0;
      for (int64_t c = 0; c < d; ++c) t += static_cast<double>(qp[c * n + i]) * kp[c * n + j];
      s[j] = t * static_cast<double>(scale);
      m = std::max(m, s[j]);
    }
    double l = 0;
    for (int64_t j = 0; j < n; ++j) l += (s[j] = std::exp(s[j] - m));
    for (int64_t c = 0; c < d; ++c) {
      double ref = 0, mag = 0;
      for (int64_t j = 0; j < n; ++j) {
        ref += s[j] * vp[c * n + j];
        mag += s[j] * std::fabs(vp[c * n + j]);
      }
      const double err = std::fabs(o.ptr<float>()[c * n + i] - ref / l) / (mag / l);
      worst = std::max(worst, err);
    }
  }
  EXPECT_LT(worst, tol) << "d " << d << ", n " << n;  // fp32 scores of magnitude ~10 and n-term sums
}

TEST(AttentionSingleHead, SameBytesWithOneOrTwoThreads) {
  const int64_t d = 16, n = 300;
  Tensor q = random_f32({d, n}, 4, 1.f), k = random_f32({d, n}, 5, 1.f), v = random_f32({d, n}, 6, 1.f);
  Tensor o1 = tf::empty(DType::F32, {d, n}), o2 = tf::empty(DType::F32, {d, n});
  const int saved = tf::thread_count();
  tf::set_thread_count(1);
  tf::attention(q, k, v, {.scale = 0.25f, .mask = tf::AttentionMask::none, .layout = tf::AttentionLayout::channels}, o1);
  tf::set_thread_count(2);
  tf::attention(q, k, v, {.scale = 0.25f, .mask = tf::AttentionMask::none, .layout = tf::AttentionLayout::channels}, o2);
  tf::set_thread_count(saved);
  EXPECT_EQ(std::memcmp(o1.data, o2.data, o1.nbytes()), 0);
}

TEST(AttentionSingleHead, RefusesMismatchedShapes) {
  Tensor q = random_f32({4, 10}, 1, 1.f), k = random_f32({4, 11}, 2, 1.f), o = tf::empty(DType::F32, {4, 10});
  EXPECT_THROW(tf::attention(q, k, q, {.scale = 1.0f, .mask = tf::AttentionMask::none, .layout = tf::AttentionLayout::channels}, o), tf::Error);
}

}  // namespace
