// tf-moss-image (tokenize, encode) on a damaged copy of the embedded tiny pipeline: every failure
// is one clear line naming the file, tensor or flag, a non-zero exit and no output left behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tool_runner.h"

using namespace tf::hostile;
using Json = nlohmann::json;

namespace {

constexpr const char* kProgram = "tf-moss-image";

struct EncoderCase {
  Scratch s;
  fs::path model, te, tokenizer, prompt, out;

  explicit EncoderCase(const std::string& name) : s(name) {
    model = copy_tiny_pipeline(s / "pipeline");
    te = model / "text_encoder";
    tokenizer = model / "tokenizer" / "tokenizer.json";
    prompt = s / "prompt.txt";
    out = s / "out.safetensors";
    write_bytes(prompt, "A red fox in the snow, watercolour.");
  }
  RunResult encode() const {
    return run_program(kProgram, {"encode", "--model", model.string(), "--prompt-file", prompt.string(), "--out",
                                  out.string()});
  }
  void expect_encode_fails(const std::vector<std::string>& names) const {
    expect_clean_failure(encode(), kProgram, names, {out});
  }
  RunResult tokenize() const {
    return run_program(kProgram, {"tokenize", "--model", model.string(), "--prompt-file", prompt.string()});
  }
  Json index() const { return Json::parse(read_bytes(te / "model.safetensors.index.json")); }
  // The shard holding `tensor` and an edit of its header.
  fs::path shard_of(const std::string& tensor) const { return te / index()["weight_map"][tensor].get<std::string>(); }
  void edit_shard_header(const std::string& tensor, const std::function<void(Json&)>& edit) const {
    edit_safetensors_header(shard_of(tensor), edit);
  }
  void edit_text_config(const std::function<void(Json&)>& edit) const {
    edit_json_file(te / "config.json", [&](Json& c) { edit(c.contains("text_config") ? c["text_config"] : c); });
  }
  // A text tensor name as the index spells it, ending with `suffix`.
  std::string tensor_ending(const std::string& suffix) const {
    const Json idx = index();
    for (auto& [k, v] : idx["weight_map"].items())
      if (k.size() >= suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          k.find("visual") == std::string::npos && k.rfind("mtp", 0) != 0)
        return k;
    ADD_FAILURE() << "no tensor ending in " << suffix;
    return suffix;
  }
};

}  // namespace

TEST(ToolMossImage, IntactPipelineEncodes) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_ok");
  RunResult r = c.encode();
  if (r.err.find("encode") != std::string::npos && r.exit_code != 0 && r.err.find("required") != std::string::npos)
    GTEST_SKIP() << "tf-moss-image has no encode command yet";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(c.out));
}

TEST(ToolMossImage, InvalidUtf8Prompt) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_utf8");
  write_bytes(c.prompt, "a red \xC3\x28 fox");
  expect_clean_failure(c.tokenize(), kProgram, {c.prompt.string(), "UTF-8", "offset 6"});
  c.expect_encode_fails({c.prompt.string(), "UTF-8"});
  write_bytes(c.prompt, "overlong \xC0\xAF and surrogate \xED\xA0\x80");
  c.expect_encode_fails({c.prompt.string(), "UTF-8"});
}

TEST(ToolMossImage, TruncatedTokenizerJson) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_tokjson");
  std::string t = read_bytes(c.tokenizer);
  write_bytes(c.tokenizer, t.substr(0, t.size() / 2));
  expect_clean_failure(c.tokenize(), kProgram, {"tokenizer.json"});
  c.expect_encode_fails({"tokenizer.json"});
  write_bytes(c.tokenizer, "");
  expect_clean_failure(c.tokenize(), kProgram, {"tokenizer.json"});
  fs::remove(c.tokenizer);
  c.expect_encode_fails({"tokenizer"});
}

TEST(ToolMossImage, MissingFolders) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_folders");
  fs::path nowhere = c.s / "nowhere";
  RunResult r = run_program(kProgram, {"encode", "--model", nowhere.string(), "--prompt-file", c.prompt.string(),
                                       "--out", c.out.string()});
  expect_clean_failure(r, kProgram, {nowhere.string()}, {c.out});
  fs::remove_all(c.te);
  c.expect_encode_fails({"text_encoder"});
}

TEST(ToolMossImage, ShardNamedByTheIndexButAbsent) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_shard");
  std::string tensor = c.tensor_ending("embed_tokens.weight");
  fs::path shard = c.shard_of(tensor);
  fs::remove(shard);
  c.expect_encode_fails({shard.filename().string(), "missing"});
}

TEST(ToolMossImage, TruncatedShard) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_truncshard");
  fs::path shard = c.shard_of(c.tensor_ending("embed_tokens.weight"));
  std::string b = read_bytes(shard);
  write_bytes(shard, b.substr(0, b.size() - 100));
  c.expect_encode_fails({shard.filename().string(), "truncated"});
}

TEST(ToolMossImage, MissingOrMisShapedTensor) {
  TF_REQUIRE_PROGRAM(kProgram);
  {
    EncoderCase c("enc_missing_tensor");
    std::string tensor = c.tensor_ending("layers.0.mlp.down_proj.weight");
    c.edit_shard_header(tensor, [&](Json& h) { h.erase(tensor); });
    c.expect_encode_fails({"layers.0.mlp.down_proj.weight"});
  }
  {
    EncoderCase c("enc_misshaped");
    std::string tensor = c.tensor_ending("layers.0.mlp.down_proj.weight");
    c.edit_shard_header(tensor, [&](Json& h) {
      Json& s = h[tensor]["shape"];
      std::swap(s[0], s[1]);
    });
    c.expect_encode_fails({"layers.0.mlp.down_proj.weight", "expected"});
  }
  {
    EncoderCase c("enc_dtype");
    std::string tensor = c.tensor_ending("norm.weight");
    c.edit_shard_header(tensor, [&](Json& h) { h[tensor]["dtype"] = "Q4_K"; });
    c.expect_encode_fails({"unknown dtype \"Q4_K\""});
  }
}

TEST(ToolMossImage, InconsistentGeometry) {
  TF_REQUIRE_PROGRAM(kProgram);
  {
    EncoderCase c("enc_kv");
    c.edit_text_config([](Json& t) { t["num_key_value_heads"] = 3; });
    c.expect_encode_fails({"config.json", "num_key_value_heads"});
  }
  {
    EncoderCase c("enc_linheads");
    c.edit_text_config([](Json& t) { t["linear_num_key_heads"] = 3; });
    c.expect_encode_fails({"config.json", "linear_num_key_heads"});
  }
  {
    EncoderCase c("enc_hidden");
    c.edit_text_config([](Json& t) { t["hidden_size"] = 96; });  // weights are 64 wide
    c.expect_encode_fails({"expected"});
  }
  {
    EncoderCase c("enc_layer_types");
    c.edit_text_config([](Json& t) { t["layer_types"] = Json::array({"linear_attention", "full_attention"}); });
    c.expect_encode_fails({"config.json", "layer_types"});
  }
  {
    EncoderCase c("enc_huge");
    c.edit_text_config([](Json& t) { t["hidden_size"] = int64_t(1) << 62; });
    c.expect_encode_fails({"config.json", "hidden_size"});
  }
}

TEST(ToolMossImage, UnwritableOutput) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_unwritable");
  fs::path out = c.s / "no-such-folder" / "o.safetensors";
  RunResult r = run_program(kProgram, {"encode", "--model", c.model.string(), "--prompt-file", c.prompt.string(),
                                       "--out", out.string()});
  expect_clean_failure(r, kProgram, {out.string()}, {out});
}

TEST(ToolMossImage, BadFlags) {
  TF_REQUIRE_PROGRAM(kProgram);
  EncoderCase c("enc_flags");
  RunResult r = run_program(kProgram, {"encode", "--model", c.model.string(), "--out", c.out.string()});
  expect_clean_failure(r, kProgram, {"--prompt-file"}, {c.out});
  r = run_program(kProgram, {"encode", "--model", c.model.string(), "--prompt-file", c.prompt.string(), "--out",
                             c.out.string(), "--device", "quantum"});
  expect_clean_failure(r, kProgram, {"quantum"}, {c.out});
  r = run_program(kProgram, {"tokenize", "--prompt-file", (c.s / "absent.txt").string(), "--model", c.model.string()});
  expect_clean_failure(r, kProgram, {"absent.txt"});
}
