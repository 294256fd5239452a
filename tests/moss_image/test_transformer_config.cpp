// Transformer geometry: the released one, config.json read and refused by name, and the geometry
// read from the tensor shapes of a single-file export with the same refusals.
#include <gtest/gtest.h>

#include "families/moss_image/transformer/layout.h"
#include "io/checkpoint.h"
#include "moss_image/tiny_transformer.h"
#include "support/error_message.h"

using namespace tiny_transformer;
using tf::test_support::error_message;

namespace {

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// The message load_transformer_config gives for the tiny config.json after `edit`.
std::string config_error(const std::function<void(Json&)>& edit) {
  const std::string dir = temp_dir("cfg");
  Json j = config_json();
  edit(j);
  write_text(dir + "/config.json", j.dump());
  return error_message([&] { load_transformer_config(dir); });
}

// The message infer_transformer_config gives for the tiny single-file tensors after `edit`.
std::string infer_error(const std::function<void(NamedTensors&)>& edit) {
  const std::string dir = temp_dir("infer");
  NamedTensors t = single_file_tensors(official_tensors(), "");
  edit(t);
  write_safetensors(dir + "/m.safetensors", t);
  const Checkpoint ck = Checkpoint::open_file(dir + "/m.safetensors");
  return error_message([&] { infer_transformer_config(ck, find_transformer_prefix(ck)); });
}

void set_shape(NamedTensors& t, const std::string& name, Shape shape) {
  for (auto& [n, x] : t)
    if (n == name) x = zeros(x.dtype, std::move(shape));
}

}  // namespace

TEST(TransformerConfig, ReleasedGeometryIsTheReferenceTable) {
  const TransformerConfig r = TransformerConfig::released();
  EXPECT_EQ(r.dim, 3072);
  EXPECT_EQ(r.layers, 42);
  EXPECT_EQ(r.heads, 24);
  EXPECT_EQ(r.head_dim, 128);
  EXPECT_EQ(r.ffn_dim, 8192);
  EXPECT_EQ(r.text_dim, 4096);
  EXPECT_EQ(r.latent_channels, 128);
  EXPECT_EQ(r.freq_dim, 256);
  EXPECT_EQ(r.rope_base, 1e4);
  EXPECT_EQ(r.text_blocks, 2);
  EXPECT_EQ(r.rope_axes, 4);
  EXPECT_EQ(r.rope_bands, 16);
  EXPECT_EQ(r.eps, 1e-6);
  EXPECT_TRUE(r.is_released_geometry());
  EXPECT_TRUE(contains(r.summary(), "— the released geometry")) << r.summary();
  // the key table the tests build checkpoints from is references.md's: 463 tensors, 5,082,308,624 values
  const auto shapes = official_shapes(r);
  int64_t values = 0;
  for (const auto& [n, s] : shapes) values += shape_numel(s);
  EXPECT_EQ(shapes.size(), 463u);
  EXPECT_EQ(values, 5082308624);
}

TEST(TransformerConfig, ReadsConfigJson) {
  const std::string dir = temp_dir("read");
  write_text(dir + "/config.json", config_json().dump());
  const TransformerConfig c = load_transformer_config(dir);
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.layers, 3);
  EXPECT_EQ(c.heads, 2);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.rope_bands, 4);
  EXPECT_EQ(c.ffn_dim, 96);
  EXPECT_EQ(c.text_dim, 48);
  EXPECT_EQ(c.latent_channels, 16);
  EXPECT_EQ(c.freq_dim, 32);
  EXPECT_EQ(c.rope_base, 1e4);
  EXPECT_EQ(c.source, dir + "/config.json");
  EXPECT_FALSE(c.is_released_geometry());
  EXPECT_TRUE(contains(c.summary(), "not the released geometry")) << c.summary();
  Json released = {{"_class_name", "MOSSImageTransformer"}, {"dim", 3072}, {"num_layers", 42}, {"num_heads", 24},
                   {"ffn_dim", 8192}, {"text_dim", 4096}, {"latent_channels", 128}, {"freq_dim", 256},
                   {"rope_base", 10000.0}};
  write_text(dir + "/config.json", released.dump());
  EXPECT_TRUE(load_transformer_config(dir).is_released_geometry());
}

TEST(TransformerConfig, RefusesWhatTheKernelsCannotRunByName) {
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& j) { j["num_heads"] = 3; }, "\"dim\" 64 is not a multiple of \"num_heads\" 3"},
      {[](Json& j) { j["dim"] = 40; }, "head_dim = dim / num_heads = 20 is not a multiple of 8"},
      {[](Json& j) { j["dim"] = 66, j["num_heads"] = 6; }, "head_dim = dim / num_heads = 11 is odd"},
      {[](Json& j) { j["dim"] = 1024; }, "head_dim = dim / num_heads = 512 is more than 256"},
      {[](Json& j) { j["freq_dim"] = 33; }, "\"freq_dim\" 33 is odd"},
      {[](Json& j) { j["ffn_dim"] = 0; }, "\"ffn_dim\" is 0; it must be positive"},
      {[](Json& j) { j["num_layers"] = -1; }, "\"num_layers\" is -1; it must be positive"},
      {[](Json& j) { j["dim"] = int64_t{1} << 40; }, "\"dim\" is 1099511627776, more than 65536"},
      {[](Json& j) { j["num_layers"] = 5000; }, "\"num_layers\" is 5000, more than 1024"},
      {[](Json& j) { j["latent_channels"] = 1 << 20; }, "\"latent_channels\" is 1048576, more than 4096"},
      {[](Json& j) { j.erase("text_dim"); }, "missing \"text_dim\""},
      {[](Json& j) { j.erase("rope_base"); }, "missing \"rope_base\""},
      {[](Json& j) { j["num_heads"] = "2"; }, "\"num_heads\" must be an integer, found \"2\""},
      {[](Json& j) { j["dim"] = 64.5; }, "\"dim\" must be an integer"},
      {[](Json& j) { j["rope_base"] = "1e4"; }, "\"rope_base\" must be a number"},
      {[](Json& j) { j["rope_base"] = 0; }, "\"rope_base\" is 0; expected a number from 1 to 1e+12"},
      {[](Json& j) { j["rope_base"] = 1e300; }, "\"rope_base\" is 1e+300; expected a number from 1 to 1e+12"},
      {[](Json& j) { j["_class_name"] = "FluxTransformer2DModel"; }, "expected MOSSImageTransformer"},
      {[](Json& j) { j = Json::array({1, 2}); }, "expected a JSON object"},
  };
  for (const auto& [edit, needle] : cases) {
    const std::string e = config_error(edit);
    EXPECT_TRUE(contains(e, needle)) << "want: " << needle << "\n got: " << e;
    EXPECT_TRUE(contains(e, "config.json")) << e;
  }
}

TEST(TransformerConfig, RefusesBadJsonAndAMissingFile) {
  const std::string dir = temp_dir("badjson");
  write_text(dir + "/config.json", "{\"dim\": 64,");
  std::string e = error_message([&] { load_transformer_config(dir); });
  EXPECT_TRUE(contains(e, dir + "/config.json: not valid JSON")) << e;
  const std::string empty_dir = temp_dir("noconfig");
  e = error_message([&] { load_transformer_config(empty_dir); });
  EXPECT_TRUE(contains(e, empty_dir + ": no config.json")) << e;
}

TEST(TransformerConfig, InfersTheGeometryFromTheShapes) {
  const TransformerConfig want = config();
  for (const std::string prefix : {"", "model.diffusion_model.", "transformer."}) {
    const std::string dir = temp_dir("shapes");
    write_safetensors(dir + "/m.safetensors", single_file_tensors(official_tensors(), prefix));
    const Checkpoint ck = Checkpoint::open_file(dir + "/m.safetensors");
    EXPECT_EQ(find_transformer_prefix(ck), prefix);
    const TransformerConfig c = infer_transformer_config(ck, prefix);
    EXPECT_EQ(c.dim, want.dim);
    EXPECT_EQ(c.layers, want.layers);
    EXPECT_EQ(c.heads, want.heads);
    EXPECT_EQ(c.head_dim, want.head_dim);
    EXPECT_EQ(c.ffn_dim, want.ffn_dim);
    EXPECT_EQ(c.text_dim, want.text_dim);
    EXPECT_EQ(c.latent_channels, want.latent_channels);
    EXPECT_EQ(c.freq_dim, want.freq_dim);
    EXPECT_EQ(c.rope_base, 1e4);
    EXPECT_EQ(c.rope_bands, want.rope_bands);
    EXPECT_EQ(c.source, dir + "/m.safetensors");
  }
}

TEST(TransformerConfig, InferenceRefusesByName) {
  std::string e = infer_error([](NamedTensors& t) { set_shape(t, "layers.0.q_norm.weight", {12}); });
  EXPECT_TRUE(contains(e, "\"layers.0.q_norm.weight\" is [12], a head_dim that does not divide dim 64")) << e;
  e = infer_error([](NamedTensors& t) { set_shape(t, "layers.0.q_norm.weight", {4}); });
  EXPECT_TRUE(contains(e, "(geometry read from the tensor shapes): head_dim = dim / num_heads = 4 is not a multiple"))
      << e;
  e = infer_error([](NamedTensors& t) { set_shape(t, "time_embedding.0.weight", {64, 33}); });
  EXPECT_TRUE(contains(e, "\"freq_dim\" 33 is odd")) << e;
  e = infer_error([](NamedTensors& t) {
    std::erase_if(t, [](auto& p) { return p.first == "video_embedder.weight"; });
  });
  EXPECT_TRUE(contains(e, "missing tensor \"video_embedder.weight\", needed to read the geometry")) << e;
  e = infer_error([](NamedTensors& t) { set_shape(t, "text_embedder.proj.weight", {64 * 48}); });
  EXPECT_TRUE(contains(e, "\"text_embedder.proj.weight\" is BF16 [3072], expected rank 2 [out, in]")) << e;
  e = infer_error([](NamedTensors& t) { t.emplace_back("layers.x.norm1.weight", zeros(DType::BF16, {64})); });
  EXPECT_TRUE(contains(e, "\"layers.x.norm1.weight\" has no layer number")) << e;
  e = infer_error([](NamedTensors& t) { t.emplace_back("layers.4999.norm1.weight", zeros(DType::BF16, {64})); });
  EXPECT_TRUE(contains(e, "\"num_layers\" is 5000, more than 1024")) << e;
}
