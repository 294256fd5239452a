// The gate's planted faults (check/gate/plant.h): one syntax parsed once, unknown plants refused by
// name, and the row and repeat faults themselves.
#include <gtest/gtest.h>

#include <string>

#include "check/gate/plant.h"
#include "core/bf16.h"
#include "core/error.h"

namespace {

using namespace tf::check::gate;

TEST(GatePlant, ParsesEveryForm) {
  EXPECT_TRUE(Plant::parse("").none());
  EXPECT_TRUE(Plant::parse("none").none());
  EXPECT_EQ(Plant::parse("repeat").kind, Plant::Kind::Repeat);
  const Plant row = Plant::parse("row");
  EXPECT_EQ(row.kind, Plant::Kind::Row);
  EXPECT_EQ(row.step, "");
  const Plant at = Plant::parse("row@p0.layer.3");
  EXPECT_EQ(at.kind, Plant::Kind::Row);
  EXPECT_EQ(at.step, "p0.layer.3");
  EXPECT_EQ(at.describe(), "row@p0.layer.3");
  const Plant extra = Plant::parse("padding-row", {"padding-row"});
  EXPECT_TRUE(extra.is_extra("padding-row"));
  EXPECT_EQ(extra.describe(), "padding-row");
}

TEST(GatePlant, UnknownPlantNamesTheFlagAndListsTheAccepted) {
  for (const std::string bad : {"rows", "row@", "padding-row", "Repeat", "row-error"}) {
    try {
      Plant::parse(bad);
      FAIL() << bad << " was accepted";
    } catch (const tf::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("--plant \"" + bad + "\""), std::string::npos) << m;
      if (bad != "row@") {
        EXPECT_NE(m.find("none, row, row@STEP, repeat"), std::string::npos) << m;
      }
    }
  }
  try {
    Plant::parse("zero-row", {"padding-row"});
    FAIL();
  } catch (const tf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("repeat, padding-row"), std::string::npos) << e.what();
  }
}

TEST(GatePlant, RowFactorGoesFarPastTheLimit) {
  EXPECT_DOUBLE_EQ(planted_row_factor(0.0), 1.05);
  EXPECT_DOUBLE_EQ(planted_row_factor(0.1), 1.4);
}

TEST(GatePlant, ScalesTheLargestRowOnly) {
  tf::Tensor t = tf::empty(tf::DType::F32, {3, 2});  // tokens: rows 0..2
  const float v[6] = {1, 1, 0, 0, 3, 4};
  std::copy(v, v + 6, t.ptr<float>());
  scale_largest_row(t, Rows::Tokens, 2.0);
  const float want[6] = {1, 1, 0, 0, 6, 8};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.ptr<float>()[i], want[i]) << i;
  tf::Tensor p = tf::empty(tf::DType::BF16, {2, 3});  // positions: columns 0..2
  const float pv[6] = {1, 0, 5, 1, 0, 5};
  for (int i = 0; i < 6; ++i) p.ptr<uint16_t>()[i] = tf::bf16_bits_from_float(pv[i]);
  scale_largest_row(p, Rows::Positions, 0.5);
  const float pw[6] = {1, 0, 2.5f, 1, 0, 2.5f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(tf::float_from_bf16_bits(p.ptr<uint16_t>()[i]), pw[i]) << i;
}

TEST(GatePlant, FlipsExactlyOneBit) {
  tf::Tensor t = tf::zeros(tf::DType::BF16, {5});
  flip_one_bit(t);
  int bits = 0;
  for (int i = 0; i < 5; ++i) bits += __builtin_popcount(t.ptr<uint16_t>()[i]);
  EXPECT_EQ(bits, 1);
}

}  // namespace
