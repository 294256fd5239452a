#include <gtest/gtest.h>

#include <cmath>

#include "check/compare.h"

namespace {

tf::Tensor filled(tf::Shape s, std::initializer_list<float> v) {
  tf::Tensor t = tf::empty(tf::DType::F32, s);
  int i = 0;
  for (float x : v) t.ptr<float>()[i++] = x;
  return t;
}

TEST(CompareRows, IdenticalIsZero) {
  auto a = filled({2, 2}, {1, 2, 3, 4});
  auto d = tf::check::compare_rows(a, a);
  EXPECT_EQ(d.worst_row, 0.0);
  EXPECT_NEAR(d.cosine_error, 0.0, 1e-15);
}

TEST(CompareRows, WorstRowIsRelativeToTheReferenceRow) {
  auto ref = filled({2, 2}, {3, 4, 30, 40});
  auto got = filled({2, 2}, {3, 4, 30, 40.5f});
  auto d = tf::check::compare_rows(got, ref);
  EXPECT_EQ(d.worst_row_index, 1);
  EXPECT_NEAR(d.worst_row, 0.5 / 50.0, 1e-12);
}

TEST(CompareRows, NonZeroRowWhereTheReferenceIsZeroIsInfinite) {
  auto ref = filled({2, 2}, {0, 0, 1, 1});
  auto got = filled({2, 2}, {1e-9f, 0, 1, 1});
  auto d = tf::check::compare_rows(got, ref);
  EXPECT_TRUE(std::isinf(d.worst_row));
  EXPECT_EQ(d.worst_row_index, 0);
}

TEST(CompareRows, NanIsNotFinite) {
  auto ref = filled({1, 2}, {1, 1});
  auto got = filled({1, 2}, {NAN, 1});
  EXPECT_FALSE(tf::check::compare_rows(got, ref).finite);
}

TEST(ComparePositions, RowsArePositionsOfChannelMajorData) {
  // [C=2, N=3]: position 2 differs
  auto ref = filled({2, 3}, {1, 2, 3, 4, 5, 6});
  auto got = filled({2, 3}, {1, 2, 3, 4, 5, 7});
  auto d = tf::check::compare_positions(got, ref);
  EXPECT_EQ(d.worst_row_index, 2);
  EXPECT_NEAR(d.worst_row, 1.0 / std::sqrt(9.0 + 36.0), 1e-12);
}

}  // namespace
