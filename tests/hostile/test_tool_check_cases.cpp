// The reference gates' check commands on damaged case files (tf-moss-image-encoder check,
// tf-idol-vae check): a missing tensor, a wrong shape or dtype, a truncated file, metadata missing
// or wrong. Each is one clear error line naming the case file (and the tensor or key), non-zero.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tool_runner.h"

using namespace tf::hostile;
using Json = nlohmann::json;

namespace {

struct CheckCase {
  Scratch s;
  std::string program;
  fs::path model, file;

  CheckCase(const std::string& name, const std::string& prog, const std::string& data_case) : s(name), program(prog) {
    model = fs::path(TF_TEST_DATA) / "tiny-pipeline";
    file = s / "case.safetensors";
    fs::copy_file(fs::path(TF_TEST_DATA) / data_case, file);
  }
  RunResult check() const { return run_program(program, {"check", "--model", model.string(), "--case", file.string()}); }
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

constexpr const char* kEnc = "tf-moss-image-encoder";
constexpr const char* kEncCase = "moss-image-cases/tiny-default.safetensors";
constexpr const char* kVae = "tf-idol-vae";
constexpr const char* kVaeCase = "vae/case-32x32.safetensors";

}  // namespace

TEST(CheckCases, EncoderIntactCasePasses) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_ok", kEnc, kEncCase);
  const RunResult r = c.check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(CheckCases, EncoderMissingTensor) {
  TF_REQUIRE_PROGRAM(kEnc);
  for (const char* t : {"p1.f32.hidden", "p0.ids", "p4.bf16.final"}) {
    CheckCase c(std::string("cc_enc_missing_") + t, kEnc, kEncCase);
    c.remove(t);
    c.expect_fails({t});
  }
}

TEST(CheckCases, EncoderWrongShapeOrDtype) {
  TF_REQUIRE_PROGRAM(kEnc);
  {
    CheckCase c("cc_enc_shape", kEnc, kEncCase);
    c.reshape("p1.f32.final", Json::array({64, 63}));
    c.expect_fails({"p1.f32.final", "expected F32 [63, 64]"});
  }
  {
    CheckCase c("cc_enc_stacked", kEnc, kEncCase);
    c.reshape("p2.bf16.step_out", Json::array({64, 5, 64}));
    c.expect_fails({"p2.bf16.step_out", "expected BF16 [5, 64, 64]"});
  }
  {
    CheckCase c("cc_enc_ids_dtype", kEnc, kEncCase);
    c.retype("p1.ids", "F32");
    c.expect_fails({"p1.ids", "F32", "expected I32"});
  }
  {
    CheckCase c("cc_enc_ids_rank", kEnc, kEncCase);
    c.reshape("p1.ids", Json::array({3, 21}));
    c.expect_fails({"p1.ids", "expected I32 [n]"});
  }
  {
    CheckCase c("cc_enc_hidden_dtype", kEnc, kEncCase);
    c.retype("p0.f32.final", "I32");
    c.expect_fails({"p0.f32.final", "expected F32"});
  }
}

TEST(CheckCases, EncoderIdsOutsideTheVocabulary) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_vocab", kEnc, kEncCase);
  // p0.ids is one I32: point its bytes at a value past any vocabulary
  Json h = Json::parse(safetensors_header(c.file));
  const uint64_t at = 8 + safetensors_header(c.file).size() + h["p0.ids"]["data_offsets"][0].get<uint64_t>();
  std::string b = read_bytes(c.file);
  b[at + 3] = 0x7f;
  write_bytes(c.file, b);
  c.expect_fails({"p0.ids", "vocabulary"});
}

TEST(CheckCases, EncoderTruncatedCase) {
  TF_REQUIRE_PROGRAM(kEnc);
  CheckCase c("cc_enc_trunc", kEnc, kEncCase);
  c.truncate();
  c.expect_fails({"truncated"});
}

TEST(CheckCases, EncoderMetadataMissingOrWrong) {
  TF_REQUIRE_PROGRAM(kEnc);
  for (const char* key : {"kind", "small_params", "prompts", "hidden", "layers"}) {
    CheckCase c(std::string("cc_enc_meta_") + key, kEnc, kEncCase);
    c.edit_metadata([&](Json& m) { m.erase(key); });
    c.expect_fails({key});
  }
  const std::vector<std::pair<std::string, std::string>> wrong{
      {"kind", "idol-vae"}, {"small_params", "sometimes"}, {"hidden", "65"}, {"layers", "7"},
      {"prompts", "[{\"text\": \"A\""}, {"prompts", "[]"}, {"prompts", "[1, 2]"}};
  for (size_t i = 0; i < wrong.size(); ++i) {
    CheckCase c("cc_enc_wrong_" + std::to_string(i), kEnc, kEncCase);
    c.edit_metadata([&](Json& m) { m[wrong[i].first] = wrong[i].second; });
    c.expect_fails({wrong[i].first == "hidden" || wrong[i].first == "layers" ? "layers" : wrong[i].first == "kind" ? "MOSS-Image" : wrong[i].first});
  }
  {
    CheckCase c("cc_enc_no_meta", kEnc, kEncCase);
    c.edit_header([](Json& h) { h.erase("__metadata__"); });
    c.expect_fails({"small_params"});
  }
}

TEST(CheckCases, VaeIntactCasePasses) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_ok", kVae, kVaeCase);
  const RunResult r = c.check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(CheckCases, VaeMissingTensor) {
  TF_REQUIRE_PROGRAM(kVae);
  for (const char* t : {"input.image", "input.noise", "input.latents", "ref.enc.down.1", "ref.enc.moments",
                        "ref.tokens.sample", "ref.dec.out", "ref.picture"}) {
    CheckCase c(std::string("cc_vae_missing_") + t, kVae, kVaeCase);
    c.remove(t);
    c.expect_fails({t});
  }
}

TEST(CheckCases, VaeWrongShapeOrDtype) {
  TF_REQUIRE_PROGRAM(kVae);
  const std::vector<std::tuple<std::string, Json, std::string>> reshaped{
      {"input.noise", Json::array({32, 2, 8}), "expected F32, F64 or BF16 [32, 4, 4]"},
      {"input.latents", Json::array({4, 32, 4}), "expected F32, F64 or BF16 [32, 4, 4]"},
      {"ref.enc.down.1", Json::array({16, 4, 16}), "expected F32, F64 or BF16 [16, 8, 8]"},
      {"ref.enc.moments", Json::array({32, 8, 4}), "[64, 4, 4]"},
      {"bf16.dec.up.1", Json::array({24, 8, 32}), "[24, 16, 16]"},
      {"ref.tokens.sample", Json::array({128, 9}), "[9, 128]"},
      {"input.image", Json::array({32, 96, 1}), "expected U8 [H, W, 3]"},
      {"ref.picture", Json::array({16, 64, 3}), "32x32"}};
  for (size_t i = 0; i < reshaped.size(); ++i) {
    const auto& [t, shape, expected] = reshaped[i];
    CheckCase c("cc_vae_shape_" + std::to_string(i), kVae, kVaeCase);
    c.reshape(t, shape);
    c.expect_fails({t, expected});
  }
  const std::vector<std::pair<std::string, std::string>> retyped{
      {"input.noise", "I32"}, {"ref.enc.mid", "I64"}, {"bf16.enc.mid", "I16"}, {"input.image", "I8"}, {"ref.dec.out", "U64"}};
  for (size_t i = 0; i < retyped.size(); ++i) {
    CheckCase c("cc_vae_dtype_" + std::to_string(i), kVae, kVaeCase);
    c.retype(retyped[i].first, retyped[i].second);
    c.expect_fails({retyped[i].first, retyped[i].second});
  }
}

TEST(CheckCases, VaePictureNotAMultipleOf16) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_multiple", kVae, kVaeCase);
  c.reshape("input.image", Json::array({128, 8, 3}));
  c.expect_fails({"input.image", "multiples of 16"});
  CheckCase d("cc_vae_multiple2", kVae, kVaeCase);
  d.reshape("input.image", Json::array({1024, 1, 3}));
  d.expect_fails({"input.image", "multiples of 16"});
}

TEST(CheckCases, VaeTruncatedCase) {
  TF_REQUIRE_PROGRAM(kVae);
  CheckCase c("cc_vae_trunc", kVae, kVaeCase);
  c.truncate();
  c.expect_fails({"truncated"});
}

TEST(CheckCases, VaeMetadataMissingOrWrong) {
  TF_REQUIRE_PROGRAM(kVae);
  for (const char* key : {"kind", "stages", "reference"}) {
    CheckCase c(std::string("cc_vae_meta_") + key, kVae, kVaeCase);
    c.edit_metadata([&](Json& m) { m.erase(key); });
    c.expect_fails({key});
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> wrong{
      {"kind", "moss_image_encoder_case", "idol-vae"},
      {"stages", "", "stages"},
      {"stages", "enc.conv_in,enc.bogus", "enc.bogus"},
      {"stages", "enc.down.1,enc.down.2", "enc.down.1"},
      {"stages", "dec.conv_in,enc.down.0", "enc.down.0"}};
  for (size_t i = 0; i < wrong.size(); ++i) {
    CheckCase c("cc_vae_wrong_" + std::to_string(i), kVae, kVaeCase);
    const auto& [key, value, named] = wrong[i];
    c.edit_metadata([&, k = key, v = value](Json& m) { m[k] = v; });  // clang 14 cannot capture bindings
    c.expect_fails({named});
  }
  {
    CheckCase c("cc_vae_no_meta", kVae, kVaeCase);
    c.edit_header([](Json& h) { h.erase("__metadata__"); });
    c.expect_fails({"kind"});
  }
}
