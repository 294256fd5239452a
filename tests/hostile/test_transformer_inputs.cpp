// Hostile MOSS-Image transformer inputs: empty tensors whose shapes claim absurd sizes (valid
// safetensors of zero bytes), absurd layer numbers, and config.json values of every wrong kind.
// Each must end in a tf::Error naming the file and what it refused, before any size is multiplied.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "families/moss_image/transformer/load.h"
#include "moss_image/tiny_transformer.h"
#include "support/error_message.h"

using namespace tiny_transformer;
using tf::test_support::error_message;

namespace {

// load_transformer's message for the tiny single-file export after `edit` (geometry from shapes).
std::string single_file_error(const std::function<void(NamedTensors&)>& edit) {
  const std::string file = temp_dir("hostile_single") + "/m.safetensors";
  NamedTensors t = single_file_tensors(official_tensors(), "");
  edit(t);
  write_safetensors(file, t);
  return error_message([&] { load_transformer(file, {}); });
}

std::function<void(NamedTensors&)> empty_as(const std::string& name, Shape shape) {
  return [name, shape](NamedTensors& t) {
    for (auto& [n, x] : t)
      if (n == name) x = zeros(DType::BF16, shape);
  };
}

}  // namespace

TEST(TransformerHostile, EmptyTensorsClaimingAbsurdSizesAreRefusedByTheBounds) {
  const int64_t huge = int64_t{1} << 40;
  const std::vector<std::pair<std::function<void(NamedTensors&)>, std::string>> cases = {
      {empty_as("video_embedder.weight", {huge, 0}), "\"dim\" is 1099511627776, more than 65536"},
      {empty_as("video_embedder.weight", {0, 16}), "\"dim\" is 0; it must be positive"},
      {empty_as("video_embedder.weight", {64, 0}), "\"latent_channels\" is 0; it must be positive"},
      {empty_as("time_embedding.0.weight", {0, huge}), "\"freq_dim\" is 1099511627776, more than 16384"},
      {empty_as("layers.0.proj.ffn_down.weight", {0, huge}), "\"ffn_dim\" is 1099511627776, more than 262144"},
      {empty_as("text_embedder.proj.weight", {0, huge}), "\"text_dim\" is 1099511627776, more than 65536"},
      {empty_as("layers.0.q_norm.weight", {0}), "\"layers.0.q_norm.weight\" is [0], a head_dim that does not divide"},
  };
  for (const auto& [edit, needle] : cases) {
    const std::string e = single_file_error(edit);
    EXPECT_NE(e.find("m.safetensors"), std::string::npos) << e;
    EXPECT_NE(e.find(needle), std::string::npos) << "want: " << needle << "\n got: " << e;
  }
}

TEST(TransformerHostile, AbsurdLayerNumbersAreRefusedWithoutOverflow) {
  for (const std::string key : {"layers.99999999999999999999999.norm1.weight", "layers.-1.norm1.weight",
                                "layers..norm1.weight", "layers.1e3.norm1.weight"}) {
    const std::string e = single_file_error([&](NamedTensors& t) { t.emplace_back(key, zeros(DType::BF16, {64})); });
    EXPECT_NE(e.find("\"" + key + "\" has no layer number"), std::string::npos) << e;
  }
  const std::string e = single_file_error(
      [](NamedTensors& t) { t.emplace_back("layers.999999999.norm1.weight", zeros(DType::BF16, {64})); });
  EXPECT_NE(e.find("\"num_layers\" is 1000000000, more than 1024"), std::string::npos) << e;
}

TEST(TransformerHostile, StoredRopeBandsMustBeFrequencies) {
  for (const float bad : {std::nanf(""), std::numeric_limits<float>::infinity(), 0.0f, -0.5f}) {
    NamedTensors t = official_tensors();
    for (auto& [n, x] : t)
      if (n == "rope.bands") x.ptr<float>()[2] = bad;
    const std::string dir = temp_dir("hostile_bands");
    write_diffusers_folder(dir, t);
    const std::string e = error_message([&] { load_transformer(dir, {}); });
    EXPECT_NE(e.find("tensor \"rope.bands\" band 2 is"), std::string::npos) << e;
  }
}

TEST(TransformerHostile, ConfigValuesOfEveryWrongKind) {
  const std::string dir = temp_dir("hostile_cfg");
  Json base = config_json();
  base.erase("dim");
  const std::string rest = base.dump().substr(1);  // the other keys, after a leading "dim" entry
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"dim\": 18446744073709551615," + rest, "\"dim\" is 18446744073709551615, past the largest integer"},
      {"{\"dim\": -9223372036854775808," + rest, "\"dim\" is -9223372036854775808; it must be positive"},
      {"{\"dim\": 1e400," + rest, "not valid JSON"},
      {"{\"dim\": NaN," + rest, "not valid JSON"},
      {"{\"dim\": null," + rest, "\"dim\" must be an integer, found null"},
      {"{\"dim\": [64]," + rest, "\"dim\" must be an integer, found [64]"},
      {"{\"dim\": {\"a\": 64}," + rest, "\"dim\" must be an integer"},
      {"{\"dim\": true," + rest, "\"dim\" must be an integer, found true"},
      {"{\"dim\": \"" + std::string(100000, '6') + "\"," + rest, "\"dim\" must be an integer"},
      {std::string(100000, '['), "nested more than"},
      {"", "not valid JSON"},
      {"\"MOSSImageTransformer\"", "expected a JSON object"},
  };
  for (const auto& [text, needle] : cases) {
    write_text(dir + "/config.json", text);
    const std::string e = error_message([&] { load_transformer_config(dir); });
    EXPECT_NE(e.find(dir + "/config.json"), std::string::npos) << e.substr(0, 300);
    EXPECT_NE(e.find(needle), std::string::npos) << "want: " << needle << "\n got: " << e.substr(0, 300);
    EXPECT_LT(e.size(), 400u) << "an error line stays short";
  }
}
