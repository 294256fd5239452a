// CPU convolution, GroupNorm, upsample, add: against float64 loops, with bounds from the fp32 sums.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend/elementwise/add.h"
#include "backend/conv/conv2d.h"
#include "backend/norm/group_norm.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/error.h"
#include "core/parallel.h"

namespace {

using tf::DType;
using tf::Tensor;

using tf::check::random_f32;
using tf::check::random_bf16;
double bf(const Tensor& t, int64_t i) { return tf::float_from_bf16_bits(t.ptr<uint16_t>()[i]); }

struct ConvCase {
  int64_t ci, h, w, co, k;
  tf::Conv2dGeometry g;
  bool residual;
};

void check_conv(const ConvCase& c) {
  Tensor x = random_f32({c.ci, c.h, c.w}, 1), w = random_bf16({c.co, c.ci, c.k, c.k}, 2, 0.2f),
         b = random_bf16({c.co}, 3);
  const int64_t ho = tf::conv2d_out_extent(c.h, static_cast<int>(c.k), c.g.stride, c.g.pad_top, c.g.pad_bottom);
  const int64_t wo = tf::conv2d_out_extent(c.w, static_cast<int>(c.k), c.g.stride, c.g.pad_left, c.g.pad_right);
  Tensor r = random_f32({c.co, ho, wo}, 4);
  Tensor y = tf::empty(DType::F32, {c.co, ho, wo});
  tf::conv2d(x, w, b, c.g, y, c.residual ? &r : nullptr);
  const int64_t kt = c.ci * c.k * c.k;
  const float* xp = x.ptr<float>();
  for (int64_t o = 0; o < c.co; ++o)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        double s = 0, mag = 0;
        for (int64_t ci = 0; ci < c.ci; ++ci)
          for (int64_t ky = 0; ky < c.k; ++ky)
            for (int64_t kx = 0; kx < c.k; ++kx) {
              const int64_t iy = i * c.g.stride + ky - c.g.pad_top, ix = j * c.g.stride + kx - c.g.pad_left;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              const double t = bf(w, ((o * c.ci + ci) * c.k + ky) * c.k + kx) * xp[(ci * c.h + iy) * c.w + ix];
              s += t;
              mag += std::fabs(t);
            }
        double ref = s + bf(b, o);
        if (c.residual) ref += r.ptr<float>()[(o * ho + i) * wo + j];
        // kt fp32 accumulations plus the bias and residual roundings
        const double bound = (kt + 2) * std::ldexp(1.0, -24) * (mag + std::fabs(ref) + 1.0) + 1e-30;
        const double got = y.ptr<float>()[(o * ho + i) * wo + j];
        ASSERT_LE(std::fabs(got - ref), bound) << "co " << o << " at " << i << "," << j;
      }
}

TEST(Conv2d, Same3x3MatchesFloat64) { check_conv({5, 9, 37, 14, 3, {}, false}); }
TEST(Conv2d, Same3x3DeepChannelsWithResidual) { check_conv({40, 6, 11, 25, 3, {}, true}); }
TEST(Conv2d, Downsample3x3Stride2PaddedRightBottom) { check_conv({7, 10, 12, 13, 3, {2, 0, 0, 1, 1}, false}); }
TEST(Conv2d, Pointwise1x1) { check_conv({33, 5, 7, 30, 1, {1, 0, 0, 0, 0}, true}); }

TEST(Conv2d, SameBytesWithOneOrTwoThreads) {
  Tensor x = random_f32({24, 17, 19}, 5), w = random_bf16({20, 24, 3, 3}, 6, 0.1f), b = random_bf16({20}, 7);
  Tensor y1 = tf::empty(DType::F32, {20, 17, 19}), y2 = tf::empty(DType::F32, {20, 17, 19});
  const int saved = tf::thread_count();
  tf::set_thread_count(1);
  tf::conv2d(x, w, b, {}, y1);
  tf::set_thread_count(2);
  tf::conv2d(x, w, b, {}, y2);
  tf::set_thread_count(saved);
  EXPECT_EQ(std::memcmp(y1.data, y2.data, y1.nbytes()), 0);
}

TEST(Conv2d, RefusesMismatchedGeometry) {
  Tensor x = random_f32({4, 8, 8}, 1), w = random_bf16({6, 5, 3, 3}, 2), b = random_bf16({6}, 3);
  Tensor y = tf::empty(DType::F32, {6, 8, 8});
  EXPECT_THROW(tf::conv2d(x, w, b, {}, y), tf::Error);  // Ci 4 vs 5
  Tensor w4 = random_bf16({6, 4, 3, 3}, 2), y_bad = tf::empty(DType::F32, {6, 4, 4});
  EXPECT_THROW(tf::conv2d(x, w4, b, {}, y_bad), tf::Error);
  Tensor wf = random_f32({6, 4, 3, 3}, 2);
  EXPECT_THROW(tf::conv2d(x, wf, b, {}, y), tf::Error);  // weights must be bf16
}

TEST(GroupNorm, MatchesFloat64WithAndWithoutSilu) {
  for (bool silu : {false, true}) {
    const int64_t c = 12, h = 7, w = 9;
    const int groups = 4;
    Tensor x = random_f32({c, h, w}, 11, 3.0f), g = random_bf16({c}, 12), b = random_bf16({c}, 13);
    for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 100.0f;  // an offset tests the two passes
    Tensor y = tf::empty(DType::F32, {c, h, w});
    tf::group_norm(x, g, b, groups, 1e-6f, silu, y);
    const int64_t gs = (c / groups) * h * w;
    for (int grp = 0; grp < groups; ++grp) {
      const float* xs = x.ptr<float>() + grp * gs;
      double m = 0, v = 0;
      for (int64_t i = 0; i < gs; ++i) m += xs[i];
      m /= gs;
      for (int64_t i = 0; i < gs; ++i) v += (xs[i] - m) * (xs[i] - m);
      v /= gs;
      for (int64_t i = 0; i < gs; ++i) {
        const int64_t ch = grp * (c / groups) + i / (h * w);
        double ref = (xs[i] - m) / std::sqrt(v + 1e-6) * bf(g, ch) + bf(b, ch);
        if (silu) ref = ref / (1.0 + std::exp(-ref));
        ASSERT_NEAR(y.ptr<float>()[grp * gs + i], ref, 4e-7 * (std::fabs(ref) + 1.0)) << "silu " << silu;
      }
    }
  }
}

TEST(GroupNorm, RefusesGroupsThatDoNotDivide) {
  Tensor x = random_f32({10, 2, 2}, 1), g = random_bf16({10}, 2), b = random_bf16({10}, 3);
  Tensor y = tf::empty(DType::F32, {10, 2, 2});
  EXPECT_THROW(tf::group_norm(x, g, b, 4, 1e-6f, false, y), tf::Error);
}

TEST(GroupNormConv2d, GivesGroupNormThenConv2dBytes) {
  Tensor x = random_f32({8, 6, 5}, 41, 2.0f), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  Tensor w = random_bf16({5, 8, 3, 3}, 44, 0.2f), bias = random_bf16({5}, 45), r = random_f32({5, 6, 5}, 46);
  for (bool silu : {false, true}) {
    Tensor t = tf::empty(DType::F32, {8, 6, 5}), want = tf::empty(DType::F32, {5, 6, 5});
    tf::group_norm(x, g, b, 4, 1e-6f, silu, t);
    tf::conv2d(t, w, bias, {}, want, &r);
    Tensor got = tf::empty(DType::F32, {5, 6, 5});
    tf::group_norm_conv2d(x, g, b, 4, 1e-6f, silu, w, bias, {}, got, &r);
    EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0) << "silu " << silu;
  }
}

// Weights prepared on the CPU are w as it is (nothing to reorder); prepared weights of other weights are refused.
TEST(Conv2d, PreparedWeightsOfOtherWeightsAreRefused) {
  Tensor x = random_f32({8, 6, 5}, 41), w = random_bf16({5, 8, 3, 3}, 44), w2 = random_bf16({5, 8, 3, 3}, 45);
  Tensor bias = random_bf16({5}, 46), want = tf::empty(DType::F32, {5, 6, 5}), got = tf::empty(DType::F32, {5, 6, 5});
  const tf::PreparedConvWeights p = tf::prepare_conv2d_weights(w, {}, false, false);
  const tf::PreparedConvWeights p2 = tf::prepare_conv2d_weights(w2, {}, false, false);
  EXPECT_EQ(p.packed.data, nullptr);
  tf::conv2d(x, w, bias, {}, want);
  tf::Conv2dGeometry g;
  g.prepared = &p;
  tf::conv2d(x, w, bias, g, got);
  EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0);
  g.prepared = &p2;
  try {
    tf::conv2d(x, w, bias, g, got);
    ADD_FAILURE() << "prepared weights of w2 taken for w";
  } catch (const tf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("prepared weights"), std::string::npos) << e.what();
  }
}

// The 1x1 convolution of x itself beside (a resnet's shortcut) gives conv2d's bytes, the main output unchanged.
TEST(GroupNormConv2d, ConvolutionBesideGivesConv2dBytes) {
  Tensor x = random_f32({8, 6, 5}, 41, 2.0f), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  Tensor w = random_bf16({5, 8, 3, 3}, 44, 0.2f), bias = random_bf16({5}, 45);
  Tensor ws = random_bf16({3, 8, 1, 1}, 47, 0.2f), bs = random_bf16({3}, 48);
  Tensor want = tf::empty(DType::F32, {5, 6, 5}), want_s = tf::empty(DType::F32, {3, 6, 5});
  tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, want);
  tf::conv2d(x, ws, bs, {1, 0, 0, 0, 0}, want_s);
  Tensor got = tf::empty(DType::F32, {5, 6, 5}), got_s = tf::empty(DType::F32, {3, 6, 5});
  const tf::Conv1x1OfInput beside{&ws, &bs, &got_s};
  tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, got, nullptr, &beside);
  EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0);
  EXPECT_EQ(std::memcmp(got_s.data, want_s.data, want_s.nbytes()), 0);
}

TEST(GroupNormConv2d, RefusesBadArgumentsByName) {
  Tensor x = random_f32({8, 6, 5}, 41), g = random_bf16({8}, 42), b = random_bf16({8}, 43);
  Tensor w = random_bf16({5, 8, 3, 3}, 44), bias = random_bf16({5}, 45), y = tf::empty(DType::F32, {5, 6, 5});
  Tensor g_short = random_bf16({7}, 42), w_wrong = random_bf16({5, 6, 3, 3}, 44);
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const tf::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { tf::group_norm_conv2d(x, g_short, b, 4, 1e-6f, true, w, bias, {}, y); }).find("gamma"),
            std::string::npos);
  EXPECT_NE(message([&] { tf::group_norm_conv2d(x, g, b, 3, 1e-6f, true, w, bias, {}, y); }).find("groups"),
            std::string::npos);
  const std::string wrong_w = message([&] { tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w_wrong, bias, {}, y); });
  EXPECT_NE(wrong_w.find("group_norm_conv2d"), std::string::npos) << wrong_w;
  EXPECT_NE(wrong_w.find("input channels"), std::string::npos) << wrong_w;
  // the convolution beside: 1x1 only, its own output, x's channels
  Tensor w3 = random_bf16({3, 8, 3, 3}, 47), w1 = random_bf16({3, 8, 1, 1}, 47), bs = random_bf16({3}, 48);
  Tensor s = tf::empty(DType::F32, {3, 6, 5}), s_bad = tf::empty(DType::F32, {3, 5, 5});
  const tf::Conv1x1OfInput not_1x1{&w3, &bs, &s}, onto_y{&w1, &bs, &y}, bad_size{&w1, &bs, &s_bad};
  EXPECT_NE(message([&] { tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, y, nullptr, &not_1x1); })
                .find("must be 1x1"),
            std::string::npos);
  EXPECT_NE(message([&] { tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, y, nullptr, &onto_y); })
                .find("beside writes y"),
            std::string::npos);
  EXPECT_NE(message([&] { tf::group_norm_conv2d(x, g, b, 4, 1e-6f, true, w, bias, {}, y, nullptr, &bad_size); }),
            "no error");
}

TEST(UpsampleNearest2xConv2d, GivesUpsampleThenConv2dBytes) {
  Tensor x = random_f32({6, 5, 4}, 61), w = random_bf16({7, 6, 3, 3}, 62, 0.2f), bias = random_bf16({7}, 63);
  Tensor r = random_f32({7, 10, 8}, 64), u = tf::empty(DType::F32, {6, 10, 8});
  Tensor want = tf::empty(DType::F32, {7, 10, 8}), got = tf::empty(DType::F32, {7, 10, 8});
  tf::upsample_nearest2x(x, u);
  tf::conv2d(u, w, bias, {}, want, &r);
  tf::upsample_nearest2x_conv2d(x, w, bias, {}, got, &r);
  EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0);
}

TEST(UpsampleNearest2xConv2d, RefusesAnOutputOfTheInputsSize) {
  Tensor x = random_f32({6, 5, 4}, 61), w = random_bf16({7, 6, 3, 3}, 62), bias = random_bf16({7}, 63);
  Tensor y = tf::empty(DType::F32, {7, 5, 4});  // the size before upsampling
  try {
    tf::upsample_nearest2x_conv2d(x, w, bias, {}, y);
    FAIL() << "no error";
  } catch (const tf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("upsample_nearest2x_conv2d"), std::string::npos) << e.what();
  }
}

TEST(UpsampleNearest2x, CopiesEachValueToA2x2Block) {
  Tensor x = random_f32({3, 4, 5}, 21), y = tf::empty(DType::F32, {3, 8, 10});
  tf::upsample_nearest2x(x, y);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 10; ++j)
        ASSERT_EQ(y.ptr<float>()[(c * 8 + i) * 10 + j], x.ptr<float>()[(c * 4 + i / 2) * 5 + j / 2]);
}

TEST(Add, ElementwiseSum) {
  Tensor a = random_f32({3, 50}, 31), b = random_f32({3, 50}, 32), y = tf::empty(DType::F32, {3, 50});
  tf::add(a, b, y);
  for (int i = 0; i < 150; ++i) ASSERT_EQ(y.ptr<float>()[i], a.ptr<float>()[i] + b.ptr<float>()[i]);
  Tensor bad = tf::empty(DType::F32, {3, 51});
  EXPECT_THROW(tf::add(a, bad, y), tf::Error);
}

}  // namespace

#include "backend/cpu/gemm_f32.h"

namespace {

TEST(Conv2d, EveryMicroKernelGivesTheSameBytes) {
  using tf::cpu::gemm::KernelChoice;
  Tensor x = random_f32({300, 9, 13}, 8), w = random_bf16({17, 300, 3, 3}, 9, 0.1f), b = random_bf16({17}, 10);
  Tensor r = random_f32({17, 9, 13}, 11);
  Tensor y1 = tf::empty(DType::F32, {17, 9, 13}), y2 = tf::empty(DType::F32, {17, 9, 13});
  ASSERT_TRUE(tf::cpu::gemm::set_kernel(KernelChoice::Portable));
  tf::conv2d(x, w, b, {}, y1, &r);
  int compared = 0;
  for (KernelChoice k : {KernelChoice::Avx512, KernelChoice::Avx2}) {
    if (!tf::cpu::gemm::set_kernel(k)) continue;  // this CPU lacks it
    tf::conv2d(x, w, b, {}, y2, &r);
    EXPECT_EQ(std::memcmp(y1.data, y2.data, y1.nbytes()), 0) << "kernel " << static_cast<int>(k);
    ++compared;
  }
  tf::cpu::gemm::set_kernel(KernelChoice::Best);
  if (compared == 0) GTEST_SKIP() << "no vector kernel on this CPU to compare with the portable one";
}

}  // namespace
