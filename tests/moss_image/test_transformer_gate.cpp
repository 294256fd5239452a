// The transformer's forward on the reference gate: the committed tiny case (made by
// python/cases/moss_transformer_case.py from the two public ports), its controls, and the forward's
// refusals by name.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "check/gate/transformer.h"
#include "families/moss_image/transformer/transformer.h"
#include "io/safetensors.h"
#include "support/error_message.h"

using namespace tf;

namespace {

const std::string kData = TF_TEST_DATA;
const std::string kModel = kData + "/moss-transformer-tiny";
const std::string kCase = kData + "/moss-transformer-cases/tiny.safetensors";

const moss_image::Transformer& tiny() {
  static const moss_image::Transformer t = moss_image::Transformer::load(kModel, {Device::CPU, true});
  return t;
}

check::gate::GateReport gate(const std::string& plant, std::string* log) {
  std::ostringstream out;
  auto r = check::gate::run_transformer_gate(tiny(), {kCase, check::gate::Plant::parse(plant)}, out);
  *log = out.str();
  return r;
}

}  // namespace

TEST(TransformerGate, TinyCasePassesEveryStepRepeatsAndPacks) {
  std::string log;
  const auto r = gate("", &log);
  EXPECT_TRUE(r.passed()) << log;
  // two samples: time, video, text embed, 2 text blocks, 4 blocks (3 for the sample skipping one), head
  EXPECT_EQ(r.steps.size(), 10u + 9u) << log;
  EXPECT_TRUE(r.repeat_same);
  EXPECT_TRUE(r.packing_same.value_or(false)) << log;
  EXPECT_LE(r.max_ratio, 1.0) << log;
}

TEST(TransformerGate, PlantedRowAndRepeatFail) {
  std::string log;
  EXPECT_FALSE(gate("row", &log).passed()) << log;
  EXPECT_FALSE(gate("row@s1.head", &log).passed()) << log;
  EXPECT_FALSE(gate("repeat", &log).passed()) << log;
}

TEST(TransformerForward, RefusesBadSamplesByName) {
  const auto& t = tiny();
  const int64_t C = t.config().latent_channels, Dt = t.config().text_dim;
  moss_image::TransformerSample s{empty(DType::F32, {C, 2, 3}), empty(DType::BF16, {4, Dt}), {}};
  auto err = [&](moss_image::TransformerSample x, float sigma = 0.5f) {
    return tf::test_support::error_message([&] { t.velocity({x}, sigma); });
  };
  auto bad = s;
  bad.latents = empty(DType::F32, {C + 1, 2, 3});
  EXPECT_NE(err(bad).find("latents"), std::string::npos);
  bad = s;
  bad.rows = empty(DType::F32, {4, Dt});
  EXPECT_NE(err(bad).find("prompt rows"), std::string::npos);
  bad = s;
  bad.skip_layers = {t.config().layers};
  EXPECT_NE(err(bad).find("skip layer"), std::string::npos);
  EXPECT_NE(err(s, NAN).find("sigma"), std::string::npos);
  EXPECT_NE(tf::test_support::error_message([&] { t.velocity({}, 0.5f); }).find("no sample"), std::string::npos);
}
