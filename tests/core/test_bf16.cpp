#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/bf16.h"
#include "core/parallel.h"
#include "core/tensor.h"

using namespace tf;

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(round_bf16(1.0f), 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(round_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties go to 1 + 2^-6.
  EXPECT_EQ(round_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(round_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_TRUE(std::isnan(round_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isinf(round_bf16(std::numeric_limits<float>::infinity())));
  EXPECT_EQ(round_bf16(3.4e38f), std::numeric_limits<float>::infinity());  // overflow rounds up, as torch does
}

TEST(Bf16, F16Decoding) {
  EXPECT_EQ(float_from_f16_bits(0x3c00), 1.0f);
  EXPECT_EQ(float_from_f16_bits(0xc000), -2.0f);
  EXPECT_EQ(float_from_f16_bits(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(float_from_f16_bits(0x7c00)));
}

TEST(Parallel, EveryIndexOnceAndDeterministic) {
  std::vector<int> hits(10007, 0);
  parallel_for(static_cast<int64_t>(hits.size()), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (int h : hits) ASSERT_EQ(h, 1);
}

TEST(Parallel, ExceptionsReachTheCaller) {
  EXPECT_THROW(parallel_for(100, [](int64_t b, int64_t) { if (b > 0) throw std::runtime_error("x"); }), std::runtime_error);
}

TEST(Tensor, RowsAndReshape) {
  Tensor t = zeros(DType::F32, {4, 3});
  t.ptr<float>()[7] = 5.0f;
  Tensor r = t.rows(2, 4);
  EXPECT_EQ(r.shape, (Shape{2, 3}));
  EXPECT_EQ(r.ptr<float>()[1], 5.0f);
  EXPECT_THROW(t.rows(3, 5), std::runtime_error);
  EXPECT_THROW(t.reshaped({5, 3}), std::runtime_error);
}
