// The reference gate on the committed tiny cases (made by transformers), its controls, and the
// tools end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "check/gate/encoder.h"
#include "core/error.h"
#include "families/moss_image/encoder/prompt_encoder.h"
#include "io/safetensors.h"

using namespace tf;
namespace fs = std::filesystem;

namespace {

const std::string kData = TF_TEST_DATA;
const std::string kCaseA = kData + "/moss-image-cases/tiny-default.safetensors";
const std::string kCaseB = kData + "/moss-image-cases/tiny-b-f32-params.safetensors";

check::gate::GateReport gate(const std::string& model, const std::string& case_path, const std::string& plant = "",
                             std::string* log = nullptr) {
  auto enc = moss_image::PromptEncoder::load(model, {Device::CPU, check::gate::encoder_case_rounds_small_params(case_path)});
  check::gate::EncoderGateOptions o;
  o.case_path = case_path;
  o.plant = check::gate::Plant::parse(plant);
  o.tokenize = [&](const std::string& t, bool chat) { return enc.tokenize(t, chat); };
  std::ostringstream out;
  auto r = check::gate::run_encoder_gate(enc.encoder(), o, out);
  if (log) *log = out.str();
  return r;
}

bool ids_match(const check::gate::GateReport& r) { return r.fact("ids") && r.fact("ids")->ok; }

}  // namespace

TEST(EncoderGate, TinyDefaultCasePasses) {
  std::string log;
  auto r = gate(kData + "/tiny-pipeline", kCaseA, "", &log);
  EXPECT_TRUE(r.passed()) << log;
  EXPECT_EQ(r.steps.size(), 5u * 5u);  // 5 prompts x (4 layers + final norm)
  EXPECT_EQ(r.steps[4].name, "p0.norm");
  EXPECT_LE(r.max_ratio, 1.0);
  EXPECT_GT(r.mean_ratio, 0.0);
  EXPECT_TRUE(ids_match(r) && r.repeat_same && r.packing_same.value_or(false));
  EXPECT_NE(log.find("\nPASS: 25 steps, ratio to limit mean "), std::string::npos) << log;
  EXPECT_NE(log.find(", repeat identical, packing identical, ids match\n"), std::string::npos) << log;
}

TEST(EncoderGate, TinyBCaseWithF32ParamsPasses) {
  std::string log;
  auto r = gate(kData + "/moss-tiny-b", kCaseB, "", &log);
  EXPECT_TRUE(r.passed()) << log;
  EXPECT_EQ(r.steps.size(), 5u * 7u);
}

TEST(EncoderGate, OneRowFarOffFails) {
  std::string log;
  auto r = gate(kData + "/tiny-pipeline", kCaseA, "row", &log);
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(r.steps_pass());
  ASSERT_NE(r.step("p0.layer.2"), nullptr);
  EXPECT_FALSE(r.step("p0.layer.2")->verdict.pass);  // the default: prompt 0's middle step
  EXPECT_TRUE(ids_match(r) && r.repeat_same);
  EXPECT_NE(log.find("\nFAIL: 25 steps"), std::string::npos) << log;
  EXPECT_NE(log.find(", planted row@p0.layer.2\n"), std::string::npos) << log;
}

TEST(EncoderGate, OneRowOfANamedStepFails) {
  auto r = gate(kData + "/tiny-pipeline", kCaseA, "row@p4.norm");
  EXPECT_FALSE(r.passed());
  for (const auto& s : r.steps) EXPECT_EQ(s.verdict.pass, s.name != "p4.norm") << s.name;
}

TEST(EncoderGate, RowPlantOnAStepTheCaseLacksIsRefused) {
  try {
    gate(kData + "/tiny-pipeline", kCaseA, "row@p9.norm");
    FAIL() << "a plant on a missing step ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--plant row@p9.norm"), std::string::npos) << e.what();
  }
}

TEST(EncoderGate, DifferingRepeatFails) {
  std::string log;
  auto r = gate(kData + "/tiny-pipeline", kCaseA, "repeat", &log);
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(r.repeat_same);
  EXPECT_TRUE(r.steps_pass());
  EXPECT_NE(log.find(", repeat DIFFERS, packing identical"), std::string::npos) << log;
}

TEST(EncoderGate, DifferentIdsFail) {
  auto enc = moss_image::PromptEncoder::load(kData + "/tiny-pipeline", {Device::CPU, true});
  check::gate::EncoderGateOptions o;
  o.case_path = kCaseA;
  o.tokenize = [&](const std::string& t, bool chat) { return enc.tokenize(t + " ", chat); };
  std::ostringstream out;
  const auto r = check::gate::run_encoder_gate(enc.encoder(), o, out);
  EXPECT_FALSE(ids_match(r));
  EXPECT_FALSE(r.passed());
  EXPECT_NE(out.str().find(", ids DIFFER\n"), std::string::npos) << out.str();
}

TEST(PromptEncoder, PromptsAreCutTo4096TokensAsTheOfficialPipelineCutsThem) {
  auto enc = moss_image::PromptEncoder::load(kData + "/tiny-pipeline", {Device::CPU, true});
  std::string prompt;
  for (int i = 0; i < 4500; ++i) prompt += " a";  // one token each
  const std::vector<int32_t> all = enc.tokenize(prompt);
  ASSERT_GT(all.size(), size_t(moss_image::kMaxPromptTokens));
  const auto out = enc.encode({"fine", prompt});
  EXPECT_EQ(out[0].dropped, 0);
  ASSERT_EQ(out[1].ids.size(), size_t(moss_image::kMaxPromptTokens));
  EXPECT_EQ(out[1].dropped, int64_t(all.size()) - moss_image::kMaxPromptTokens);
  EXPECT_TRUE(std::equal(out[1].ids.begin(), out[1].ids.end(), all.begin())) << "not the first 4096 tokens";
  EXPECT_EQ(out[1].rows.shape, (Shape{moss_image::kMaxPromptTokens, enc.encoder().config().hidden}));
}

TEST(PromptEncoder, PromptLongerThanTheModelsMaximumIsRefused) {
  const fs::path dir = fs::temp_directory_path() / "tf_encoder_short_positions";
  fs::remove_all(dir);
  fs::copy(kData + "/tiny-pipeline", dir, fs::copy_options::recursive);
  const fs::path cfg = dir / "text_encoder" / "config.json";
  std::ifstream in(cfg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string key = "\"max_position_embeddings\": 4096";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(text.find(key), key.size(), "\"max_position_embeddings\": 64");
  std::ofstream(cfg) << text;
  auto enc = moss_image::PromptEncoder::load(dir.string(), {Device::CPU, true});
  std::string prompt;
  for (int i = 0; i < 100; ++i) prompt += " a";
  try {
    enc.encode({"fine", prompt});
    FAIL() << "a prompt past max_position_embeddings was encoded";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("prompt 2 is"), std::string::npos) << m;
    EXPECT_NE(m.find("max_position_embeddings 64"), std::string::npos) << m;
    EXPECT_NE(m.find("config.json"), std::string::npos) << m;
  }
  EXPECT_EQ(enc.encode({"fine"}).size(), 1u);
  fs::remove_all(dir);
}

TEST(EncoderGate, CaseForAnotherModelIsRefused) {
  auto enc = moss_image::PromptEncoder::load(kData + "/moss-tiny-b", {Device::CPU, true});
  check::gate::EncoderGateOptions o;
  o.case_path = kCaseA;
  o.tokenize = [&](const std::string& t, bool chat) { return enc.tokenize(t, chat); };
  std::ostringstream out;
  EXPECT_THROW(check::gate::run_encoder_gate(enc.encoder(), o, out), Error);
}

TEST(EncodeTool, WritesIdsAndRowsAndPacksTheNegative) {
  fs::path dir = fs::temp_directory_path() / ("tf_encode_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "p.txt") << "A red fox in the snow";
  std::ofstream(dir / "n.txt") << "blurry";
  const std::string tool = std::string(TF_BINARY_DIR) + "/tools/tf-moss-image";
  const std::string out = (dir / "o.safetensors").string();
  std::string cmd = tool + " encode --model " + kData + "/tiny-pipeline --prompt-file " + (dir / "p.txt").string() +
                    " --negative-file " + (dir / "n.txt").string() + " --out " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto f = SafetensorsFile::open(out);
  auto enc = moss_image::PromptEncoder::load(kData + "/tiny-pipeline", {});
  auto alone = enc.encode({"A red fox in the snow"});
  auto neg = enc.encode({"blurry"});
  Tensor ids = f->get("prompt.ids"), rows = f->get("prompt.rows"), nrows = f->get("negative.rows");
  ASSERT_EQ(ids.dim(0), static_cast<int64_t>(alone[0].ids.size()));
  EXPECT_EQ(0, std::memcmp(ids.data, alone[0].ids.data(), ids.nbytes()));
  ASSERT_EQ(rows.shape, alone[0].rows.shape);
  EXPECT_EQ(0, std::memcmp(rows.data, alone[0].rows.data, rows.nbytes()));
  ASSERT_EQ(nrows.shape, neg[0].rows.shape);
  EXPECT_EQ(0, std::memcmp(nrows.data, neg[0].rows.data, nrows.nbytes()));
  EXPECT_EQ(f->get("negative.ids").dtype, DType::I32);
  // A bad flag value fails cleanly with nothing written.
  std::string bad = tool + " encode --model " + kData + "/tiny-pipeline --prompt-file " + (dir / "p.txt").string() +
                    " --out " + (dir / "bad.safetensors").string() + " --device tpu 2>/dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
  EXPECT_FALSE(fs::exists(dir / "bad.safetensors"));
  fs::remove_all(dir);
}
