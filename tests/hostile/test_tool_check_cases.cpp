// The reference gate's check commands on damaged case files (tf-moss-image check encoder,
// tf-flux2-vae check): a missing tensor, a wrong shape or dtype, a truncated file, metadata missing
// or wrong, an unknown plant. Each is one clear error line naming the case file (and the tensor or
// key) or the flag, non-zero.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tool_runner.h"

using namespace tf::hostile;
using Json = nlohmann::json;

namespace {

struct CheckCase {
  Scratch s;
  std::string program;
  std::vector<std::string> command;  // the words before the flags
  fs::path model, file;

  CheckCase(const std::string& name, const std::string& prog, const std::string& data_case) : s(name), program(prog) {
    command = prog == "tf-moss-image" ? std::vector<std::string>{"check", "encoder"} : std::vector<std::string>{"check"};
    model = fs::path(TF_TEST_DATA) / "tiny-pipeline";
    file = s / "case.safetensors";
    fs::copy_file(fs::path(TF_TEST_DATA) / data_case, file);
  }
  RunResult check(const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args = command;
    for (const std::string& a : {std::string("--model"), model.string(), std::string("--case"), file.string()}) args.push_back(a);
    args.insert(args.end(), more.begin(), more.end());
    return run_program(program, args);
  }
  void expect_fails(const std::vector<std::string>& names) const {
    std::vector<std::string> all{file.string()};
    all.insert(all.end(), names.begin(), names.end());
    expect_clean_failure(check(), program, all);
  }
  void edit_header(const std::function<void(Json&)>& edit) const {
    Json h = Json::parse(safetensors_header(file));
    edit(h);
    rewrite_safetensors_header(file, h.dump());
  }
  void edit_metadata(const std::function<void(Json&)>& edit) const {
    edit_header([&](Json& h) { edit(h["__metadata__"]); });
  }
  // The tensor keeps its bytes under a new shape of the same element count.
  void reshape(const std::string& tensor, const Json& shape) const {
    edit_header([&](Json& h) { h.at(tensor)["shape"] = shape; });
  }
  void retype(const std::string& tensor, const std::string& dtype) const {
    edit_header([&](Json& h) { h.at(tensor)["dtype"] = dtype; });
  }
  void remove(const std::string& tensor) const {
    edit_header([&](Json& h) { h.erase(tensor); });
  }
  void truncate() const {
    const std::string b = read_bytes(file);
    write_bytes(file, b.substr(0, b.size() - 1000));
  }
};

constexpr const char* kEnc = "tf-moss-image";
constexpr const char* kEncCase = "moss-image-cases/tiny-default.safetensors";
constexpr const char* kVae = "tf-flux2-vae";
constexpr const char* kVaeCase = "vae/case-32x32.safetensors";

}  // namespace

TEST(CheckCases, EncoderIntactCasePasses) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_ok", kEnc, kEncCase);
  const RunResult r = c.check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\nPASS: 25 steps, ratio to limit mean "), std::string::npos) << r.out;
}

TEST(CheckCases, EncoderMissingTensor) {
  TF_REQUIRE_PROGRAM(kEnc);
  for (const char* t : {"f32.p1.layer.2", "in.p0.ids", "in.p3.embeddings", "f32.p4.norm"}) {
    CheckCase c(std::string("cc_enc_missing_") + t, kEnc, kEncCase);
    c.remove(t);
    c.expect_fails({t});
  }
}

TEST(CheckCases, EncoderWithoutTorchOutputsJudgesByRoundingAlone) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_no_torch", kEnc, kEncCase);
  c.remove("bf16.p4.layer.0");
  c.remove("whole.p4.bf16");
  const RunResult r = c.check();
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const size_t whole = r.out.find("whole prompt 4: ours cosine");
  ASSERT_NE(whole, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find('\n', whole) - 12, 12), " (not gated)") << r.out;
  EXPECT_EQ(r.out.substr(whole, r.out.find('\n', whole) - whole).find("torch"), std::string::npos) << r.out;
  const size_t line = r.out.find("\np4.layer.0 ");
  ASSERT_NE(line, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(line, r.out.find('\n', line + 1) - line).find(" - "), std::string::npos) << r.out;
}

TEST(CheckCases, EncoderWrongShapeOrDtype) {
  TF_REQUIRE_PROGRAM(kEnc);
  const std::vector<std::tuple<std::string, Json, std::string>> reshaped{
      {"f32.p1.norm", Json::array({64, 63}), "expected F32 or F64 [63, 64]"},
      {"bf16.p2.layer.1", Json::array({32, 128}), "expected BF16 [64, 64]"},
      {"in.p1.embeddings", Json::array({64, 63}), "expected F32 [63, 64]"},
      {"in.p1.ids", Json::array({3, 21}), "expected I32 [n]"}};
  for (size_t i = 0; i < reshaped.size(); ++i) {
    const auto& [t, shape, expected] = reshaped[i];
    CheckCase c("cc_enc_shape_" + std::to_string(i), kEnc, kEncCase);
    c.reshape(t, shape);
    c.expect_fails({t, expected});
  }
  {
    CheckCase c("cc_enc_ids_dtype", kEnc, kEncCase);
    c.retype("in.p1.ids", "F32");
    c.expect_fails({"in.p1.ids", "F32", "expected I32"});
  }
  {
    CheckCase c("cc_enc_rows_dtype", kEnc, kEncCase);
    c.retype("f32.p0.norm", "I32");
    c.expect_fails({"f32.p0.norm", "expected F32 or F64"});
  }
}

TEST(CheckCases, EncoderIdsOutsideTheVocabulary) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_vocab", kEnc, kEncCase);
  // in.p0.ids is one I32: point its bytes at a value past any vocabulary
  Json h = Json::parse(safetensors_header(c.file));
  const uint64_t at = 8 + safetensors_header(c.file).size() + h["in.p0.ids"]["data_offsets"][0].get<uint64_t>();
  std::string b = read_bytes(c.file);
  b[at + 3] = 0x7f;
  write_bytes(c.file, b);
  c.expect_fails({"in.p0.ids", "vocabulary"});
}

TEST(CheckCases, EncoderTruncatedCase) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_trunc", kEnc, kEncCase);
  c.truncate();
  c.expect_fails({"truncated"});
}

TEST(CheckCases, EncoderMetadataMissingOrWrong) {
  TF_REQUIRE_PROGRAM(kEnc);
  for (const char* key : {"kind", "component", "steps", "reference", "small_params", "prompts", "hidden", "layers"}) {
    CheckCase c(std::string("cc_enc_meta_") + key, kEnc, kEncCase);
    c.edit_metadata([&](Json& m) { m.erase(key); });
    c.expect_fails({std::string("\"") + key + "\""});
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> wrong{
      {"kind", "moss_image_encoder_case", "tensorfold.case"},
      {"component", "flux2_vae", "\"component\""},
      {"small_params", "sometimes", "small_params"},
      {"hidden", "65", "layers"},
      {"layers", "7", "layers"},
      {"prompts", "[{\"text\": \"A\"", "\"prompts\""},
      {"prompts", "[]", "\"prompts\""},
      {"prompts", "[1, 2]", "\"prompts\""},
      {"prompts", "[{\"text\": \"A\", \"format\": \"raw\"}]", "\"steps\""},  // one prompt, five prompts' steps
      {"steps", "[\"p0.layer.0\"", "\"steps\""},
      {"steps", "[\"p0.layer.1\", \"p0.layer.0\"]", "\"steps\""},
      {"reference", "torch 2.15.0", "\"reference\""}};
  for (size_t i = 0; i < wrong.size(); ++i) {
    CheckCase c("cc_enc_wrong_" + std::to_string(i), kEnc, kEncCase);
    const auto& [key, value, named] = wrong[i];
    c.edit_metadata([&, k = key, v = value](Json& m) { m[k] = v; });  // clang 14 cannot capture bindings
    c.expect_fails({named});
  }
  {
    CheckCase c("cc_enc_no_meta", kEnc, kEncCase);
    c.edit_header([](Json& h) { h.erase("__metadata__"); });
    c.expect_fails({"\"kind\""});
  }
}

TEST(CheckCases, EncoderUnknownPlantOrComponent) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_plant", kEnc, kEncCase);
  for (const char* bad : {"bogus", "padding-row", "row-error"})
    expect_clean_failure(c.check({"--plant", bad}), kEnc, {"--plant", bad, "none, row, row@STEP, repeat"});
  expect_clean_failure(c.check({"--plant", "row@p9.norm"}), kEnc, {"--plant row@p9.norm", c.file.string(), "p9.norm"});
  expect_clean_failure(run_program(kEnc, {"check", "vae", "--model", c.model.string(), "--case", c.file.string()}),
                       kEnc, {"vae", "expected encoder, transformer or pipeline"});
  expect_clean_failure(run_program(kEnc, {"check", "pipeline", "--model", c.model.string(), "--case", c.file.string()}),
                       kEnc, {c.file.string(), "\"moss_image.encoder\", expected \"moss_image.pipeline\""});
}

TEST(CheckCases, VaeIntactCasePasses) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_ok", kVae, kVaeCase);
  const RunResult r = c.check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\nPASS: 16 steps, ratio to limit mean "), std::string::npos) << r.out;
}

TEST(CheckCases, VaeMissingTensor) {
  TF_REQUIRE_PROGRAM(kVae);
  for (const char* t : {"in.image", "in.noise", "in.latents", "f32.enc.down.1", "f32.enc.moments",
                        "f32.tokens.sample", "f32.dec.out", "whole.picture"}) {
    CheckCase c(std::string("cc_vae_missing_") + t, kVae, kVaeCase);
    c.remove(t);
    c.expect_fails({t});
  }
}

TEST(CheckCases, VaeWrongShapeOrDtype) {
  TF_REQUIRE_PROGRAM(kVae);
  const std::vector<std::tuple<std::string, Json, std::string>> reshaped{
      {"in.noise", Json::array({32, 2, 8}), "expected F32 [32, 4, 4]"},
      {"in.latents", Json::array({4, 32, 4}), "expected F32 [32, 4, 4]"},
      {"f32.enc.down.1", Json::array({16, 4, 16}), "expected F32 or F64 [16, 8, 8]"},
      {"f32.enc.moments", Json::array({32, 8, 4}), "[64, 4, 4]"},
      {"bf16.dec.up.1", Json::array({24, 8, 32}), "[24, 16, 16]"},
      {"f32.tokens.sample", Json::array({128, 9}), "[9, 128]"},
      {"in.image", Json::array({32, 96, 1}), "expected U8 [H, W, 3]"},
      {"whole.picture", Json::array({16, 64, 3}), "32x32"}};
  for (size_t i = 0; i < reshaped.size(); ++i) {
    const auto& [t, shape, expected] = reshaped[i];
    CheckCase c("cc_vae_shape_" + std::to_string(i), kVae, kVaeCase);
    c.reshape(t, shape);
    c.expect_fails({t, expected});
  }
  const std::vector<std::pair<std::string, std::string>> retyped{
      {"in.noise", "I32"}, {"f32.enc.mid", "I64"}, {"bf16.enc.mid", "I16"}, {"in.image", "I8"}, {"f32.dec.out", "U64"}};
  for (size_t i = 0; i < retyped.size(); ++i) {
    CheckCase c("cc_vae_dtype_" + std::to_string(i), kVae, kVaeCase);
    c.retype(retyped[i].first, retyped[i].second);
    c.expect_fails({retyped[i].first, retyped[i].second});
  }
}

TEST(CheckCases, VaePictureNotAMultipleOf16) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_multiple", kVae, kVaeCase);
  c.reshape("in.image", Json::array({128, 8, 3}));
  c.expect_fails({"in.image", "multiples of 16"});
  CheckCase d("cc_vae_multiple2", kVae, kVaeCase);
  d.reshape("in.image", Json::array({1024, 1, 3}));
  d.expect_fails({"in.image", "multiples of 16"});
}

TEST(CheckCases, VaeTruncatedCase) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_trunc", kVae, kVaeCase);
  c.truncate();
  c.expect_fails({"truncated"});
}

TEST(CheckCases, VaeMetadataMissingOrWrong) {
  TF_REQUIRE_PROGRAM(kVae);
  for (const char* key : {"kind", "component", "steps", "reference"}) {
    CheckCase c(std::string("cc_vae_meta_") + key, kVae, kVaeCase);
    c.edit_metadata([&](Json& m) { m.erase(key); });
    c.expect_fails({std::string("\"") + key + "\""});
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> wrong{
      {"kind", "idol-vae", "tensorfold.case"},
      {"component", "moss_image.encoder", "\"component\""},
      {"steps", "", "\"steps\""},
      {"steps", "enc.conv_in,enc.down.0", "\"steps\""},
      {"steps", "[\"enc.conv_in\", \"enc.bogus\"]", "enc.bogus"},
      {"steps", "[\"enc.down.1\", \"enc.down.2\"]", "enc.down.1"},
      {"steps", "[\"dec.conv_in\", \"enc.down.0\"]", "enc.down.0"},
      {"steps", "[\"enc.conv_in\", \"enc.conv_in\"]", "twice"},
      {"reference", "diffusers 0.42.1, torch 2.15.0", "\"reference\""}};
  for (size_t i = 0; i < wrong.size(); ++i) {
    CheckCase c("cc_vae_wrong_" + std::to_string(i), kVae, kVaeCase);
    const auto& [key, value, named] = wrong[i];
    c.edit_metadata([&, k = key, v = value](Json& m) { m[k] = v; });  // clang 14 cannot capture bindings
    c.expect_fails({named});
  }
  {
    CheckCase c("cc_vae_no_meta", kVae, kVaeCase);
    c.edit_header([](Json& h) { h.erase("__metadata__"); });
    c.expect_fails({"\"kind\""});
  }
}

TEST(CheckCases, VaeUnknownPlant) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_plant", kVae, kVaeCase);
  for (const char* bad : {"row-error", "zero-row", "row@"})
    expect_clean_failure(c.check({"--plant", bad}), kVae, {"--plant", bad});
  expect_clean_failure(c.check({"--plant", "bogus"}), kVae, {"none, row, row@STEP, repeat, padding-row"});
  expect_clean_failure(c.check({"--plant", "row@dec.nope"}), kVae, {"--plant row@dec.nope", c.file.string()});
}
