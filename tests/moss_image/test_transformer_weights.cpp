// Transformer weights: every view by its official name holds the bytes of that tensor, in the
// diffusers folder (pipeline or component, shards or one file) and in a single-file export (fused
// qkv as row views, each prefix); small params as stored or rounded; rope.bands stored or computed
// to the reference's bits; errors name the file, the tensor and what was expected.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "families/moss_image/transformer/load.h"
#include "moss_image/tiny_transformer.h"
#include "support/error_message.h"

using namespace tiny_transformer;
using tf::test_support::error_message;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// Each official tensor against its view: shape, and the bytes (a small F32 param loaded rounded
// holds its bf16 rounding).
void expect_views_hold(const TransformerWeights& w, const NamedTensors& official) {
  const auto v = views(w);
  EXPECT_EQ(v.size(), official.size());
  for (const auto& [name, t] : official) {
    ASSERT_TRUE(v.count(name)) << name;
    const Tensor& got = *v.at(name);
    ASSERT_EQ(got.shape, t.shape) << name;
    EXPECT_EQ(got.device, Device::CPU) << name;
    if (got.dtype == t.dtype) {
      EXPECT_EQ(0, std::memcmp(got.data, t.data, t.nbytes())) << name << ": not the bytes of that tensor";
      continue;
    }
    ASSERT_TRUE(t.dtype == DType::F32 && got.dtype == DType::BF16) << name << " is " << got.describe();
    for (int64_t i = 0; i < t.numel(); ++i)
      ASSERT_EQ(got.ptr<uint16_t>()[i], bf16_bits_from_float(t.ptr<float>()[i])) << name << " [" << i << "]";
  }
}

void expect_matrices_bf16(const TransformerWeights& w) {
  for (const auto& [name, t] : views(w))
    if (t->rank() == 2) {
      EXPECT_EQ(t->dtype, DType::BF16) << name;
    }
}

// A pipeline folder (model_index.json + transformer/) holding `tensors` in the diffusers layout.
std::string pipeline(const std::string& name, const NamedTensors& tensors, const Json& config = config_json()) {
  const std::string root = temp_dir(name);
  write_text(root + "/model_index.json",
             R"({"_class_name": "MossImagePipeline", "transformer": ["diffusers", "MOSSImageTransformer"]})");
  write_diffusers_folder(root + "/transformer", tensors, config);
  return root;
}

// The message load_transformer gives for the diffusers folder of the official tensors after `edit`.
std::string folder_error(const std::function<void(NamedTensors&)>& edit) {
  NamedTensors t = official_tensors();
  edit(t);
  const std::string root = pipeline("err", t);
  return error_message([&] { load_transformer(root, {}); });
}

Tensor* find(NamedTensors& t, const std::string& name) {
  for (auto& [n, x] : t)
    if (n == name) return &x;
  ADD_FAILURE() << "no " << name;
  return &t.front().second;
}

}  // namespace

TEST(TransformerWeights, PipelineAndComponentFolderGiveEveryViewByName) {
  const NamedTensors official = official_tensors();
  const std::string root = pipeline("folder", official);
  for (const std::string& path : {root, root + "/transformer"}) {
    const LoadedTransformer t = load_transformer(path, {});
    EXPECT_EQ(t.config.source, root + "/transformer/config.json");
    EXPECT_EQ(t.weights.prefix, "");
    EXPECT_FALSE(t.weights.fused_qkv);
    EXPECT_TRUE(t.weights.rope_bands_stored);
    EXPECT_EQ(t.weights.rope_bands_off_formula, 0);
    EXPECT_EQ(t.weights.text_embedder.blocks.size(), 2u);
    EXPECT_EQ(t.weights.layers.size(), 3u);
    expect_views_hold(t.weights, official);
    expect_matrices_bf16(t.weights);
  }
}

TEST(TransformerWeights, OneDiffusersFileInTheComponentFolder) {
  const NamedTensors official = official_tensors();
  const std::string dir = temp_dir("onefile");
  write_text(dir + "/config.json", config_json().dump());
  write_safetensors(dir + "/diffusion_pytorch_model.safetensors", official);
  const LoadedTransformer t = load_transformer(dir, {});
  expect_views_hold(t.weights, official);
}

TEST(TransformerWeights, FusedSingleFileUnderEachPrefixGivesRowViews) {
  const NamedTensors official = official_tensors();
  NamedTensors want = official;
  std::erase_if(want, [](auto& p) { return p.first == "rope.bands"; });
  want.emplace_back("rope.bands", rope_bands_from_formula(4, 1e4));
  for (const std::string prefix : {"model.diffusion_model.", "diffusion_model.", "transformer.", ""}) {
    const std::string file = temp_dir("fused") + "/moss_image_base.safetensors";
    write_safetensors(file, single_file_tensors(official, prefix));
    const LoadedTransformer t = load_transformer(file, {});
    EXPECT_EQ(t.config.source, file);
    EXPECT_EQ(t.config.dim, 64);
    EXPECT_EQ(t.config.rope_base, 1e4);
    EXPECT_EQ(t.weights.prefix, prefix);
    EXPECT_TRUE(t.weights.fused_qkv);
    EXPECT_FALSE(t.weights.rope_bands_stored);
    expect_views_hold(t.weights, want);
    // q, k, v are consecutive row ranges of the one fused tensor: no copy
    const size_t rows_bytes = 64 * 64 * 2;
    for (const JointBlockWeights& l : t.weights.layers) {
      EXPECT_EQ(l.k.data, static_cast<char*>(l.q.data) + rows_bytes) << prefix;
      EXPECT_EQ(l.v.data, static_cast<char*>(l.k.data) + rows_bytes) << prefix;
      EXPECT_EQ(l.q.storage, l.v.storage) << prefix;
    }
  }
}

TEST(TransformerWeights, ConfigBesideTheSingleFileGivesTheGeometry) {
  const std::string dir = temp_dir("beside");
  write_safetensors(dir + "/m.safetensors", single_file_tensors(official_tensors(), "transformer."));
  Json j = config_json();
  j["rope_base"] = 500.0;
  write_text(dir + "/config.json", j.dump());
  const LoadedTransformer t = load_transformer(dir + "/m.safetensors", {});
  EXPECT_EQ(t.config.rope_base, 500.0);
  EXPECT_EQ(t.config.source, dir + "/config.json");
  const Tensor want = rope_bands_from_formula(4, 500.0);
  EXPECT_EQ(0, std::memcmp(t.weights.rope_bands.data, want.data, want.nbytes()));
  // one that does not fit the file is named with the tensor it contradicts
  j["dim"] = 128;
  write_text(dir + "/config.json", j.dump());
  const std::string e = error_message([&] { load_transformer(dir + "/m.safetensors", {}); });
  EXPECT_TRUE(contains(e, "\"transformer.video_embedder.weight\" is BF16 [64, 16], expected BF16 [128, 16]")) << e;
}

TEST(TransformerWeights, SmallParamsAsStoredOrRounded) {
  const NamedTensors official = official_tensors(DType::F32);
  const std::string root = pipeline("small", official);
  const LoadedTransformer rounded = load_transformer(root, {Device::CPU, true});
  const LoadedTransformer stored = load_transformer(root, {Device::CPU, false});
  EXPECT_TRUE(rounded.weights.small_params_rounded);
  EXPECT_FALSE(stored.weights.small_params_rounded);
  EXPECT_EQ(rounded.weights.layers[1].q_norm.dtype, DType::BF16);
  EXPECT_EQ(rounded.weights.text_embedder.blocks[0].qkv.b.dtype, DType::BF16);
  EXPECT_EQ(stored.weights.layers[1].q_norm.dtype, DType::F32);
  EXPECT_EQ(stored.weights.shared_block_modulation.b.dtype, DType::F32);
  expect_views_hold(rounded.weights, official);
  expect_views_hold(stored.weights, official);
  expect_matrices_bf16(stored.weights);
}

TEST(TransformerWeights, RopeBandsFormulaGivesTheReferenceBits) {
  // references.md's fp32 bits of 1 / 10000^(j/16), j < 16 (4 differ by one ulp from correct rounding)
  const uint32_t want[16] = {0x3f800000, 0x3f0ff59a, 0x3ea1e89b, 0x3e361887, 0x3dcccccd, 0x3d6655c2,
                             0x3d0186e3, 0x3c91ad39, 0x3c23d70a, 0x3bb8449c, 0x3b4f3e38, 0x3ae91528,
                             0x3a83126f, 0x3a136a16, 0x39a5cb60, 0x393a7753};
  const TransformerConfig r = TransformerConfig::released();
  const Tensor b = rope_bands_from_formula(r.rope_bands, r.rope_base);
  ASSERT_EQ(b.shape, (Shape{16}));
  for (int j = 0; j < 16; ++j) EXPECT_EQ(std::bit_cast<uint32_t>(b.ptr<float>()[j]), want[j]) << "band " << j;
}

TEST(TransformerWeights, StoredRopeBandsAreUsedAndDifferencesCounted) {
  NamedTensors t = official_tensors();
  Tensor* bands = find(t, "rope.bands");
  *bands = rope_bands_from_formula(4, 1e4);
  bands->ptr<float>()[3] = std::nextafter(bands->ptr<float>()[3], 1.0f);
  const LoadedTransformer got = load_transformer(pipeline("bands", t), {});
  EXPECT_TRUE(got.weights.rope_bands_stored);
  EXPECT_EQ(got.weights.rope_bands_off_formula, 1);
  EXPECT_EQ(0, std::memcmp(got.weights.rope_bands.data, bands->data, 16));
}

TEST(TransformerWeights, ErrorsNameTheFileTheTensorAndWhatWasExpected) {
  auto drop = [](const std::string& name) {
    return [name](NamedTensors& t) { std::erase_if(t, [&](auto& p) { return p.first == name; }); };
  };
  auto reshape = [](const std::string& name, Shape s) {
    return [name, s](NamedTensors& t) { *find(t, name) = zeros(find(t, name)->dtype, s); };
  };
  auto retype = [](const std::string& name, DType d) {
    return [name, d](NamedTensors& t) { *find(t, name) = zeros(d, find(t, name)->shape); };
  };
  auto add = [](const std::string& name, Shape s) {
    return [name, s](NamedTensors& t) { t.emplace_back(name, zeros(DType::BF16, s)); };
  };
  const std::string shard2 = "transformer/diffusion_pytorch_model-00002-of-00002.safetensors: ";
  const std::vector<std::pair<std::function<void(NamedTensors&)>, std::string>> cases = {
      {drop("layers.2.proj.k.weight"),
       "transformer: missing tensor \"layers.2.proj.k.weight\", expected BF16 [64, 64]"},
      {drop("text_embedder.blocks.1.ffn_up.bias"),
       "missing tensor \"text_embedder.blocks.1.ffn_up.bias\", expected BF16 or F32 [96]"},
      {reshape("layers.1.proj.ffn_down.weight", {64, 95}),
       shard2 + "tensor \"layers.1.proj.ffn_down.weight\" is BF16 [64, 95], expected BF16 [64, 96]"},
      {reshape("layers.2.k_norm.weight", {64}), "tensor \"layers.2.k_norm.weight\" is BF16 [64], expected BF16 [32]"},
      {retype("layers.0.proj.o.weight", DType::F16),
       "tensor \"layers.0.proj.o.weight\" is F16 [64, 64], expected BF16 [64, 64] (or F32, rounded to bf16)"},
      {retype("text_embedder.blocks.1.norm2.weight", DType::I32),
       "tensor \"text_embedder.blocks.1.norm2.weight\" is I32 [64], expected BF16 or F32 [64]"},
      {reshape("rope.bands", {5}), "tensor \"rope.bands\" is F32 [5], expected F32 [4]"},
      {add("layers.3.norm1.weight", {64}),
       "1 tensor(s) a MOSS-Image transformer of this geometry does not have: \"layers.3.norm1.weight\""},
      {add("layers.1.proj.qkv.weight", {192, 64}), "does not have: \"layers.1.proj.qkv.weight\""},
      {add("lora_unet.down.weight", {4, 64}), "does not have: \"lora_unet.down.weight\""},
  };
  for (const auto& [edit, needle] : cases) {
    const std::string e = folder_error(edit);
    EXPECT_TRUE(contains(e, needle)) << "want: " << needle << "\n got: " << e;
  }
}

TEST(TransformerWeights, SingleFileErrorsName) {
  const std::string dir = temp_dir("single_err");
  const std::string file = dir + "/m.safetensors";
  // mixed prefixes: a wrong (or merged) checkpoint
  NamedTensors t = single_file_tensors(official_tensors(), "model.diffusion_model.");
  t.emplace_back("transformer.rope.bands", rope_bands_from_formula(4, 1e4));
  write_safetensors(file, t);
  std::string e = error_message([&] { load_transformer(file, {}); });
  EXPECT_TRUE(contains(e, file + ": keys under different prefixes")) << e;
  EXPECT_TRUE(contains(e, "\"transformer.rope.bands\" (prefix \"transformer.\")")) << e;
  // fused in layer 0, split in layer 2: the split ones are named
  t = single_file_tensors(official_tensors(), "");
  t.emplace_back("layers.2.proj.q.weight", zeros(DType::BF16, {64, 64}));
  write_safetensors(file, t);
  e = error_message([&] { load_transformer(file, {}); });
  EXPECT_TRUE(contains(e, "does not have: \"layers.2.proj.q.weight\"")) << e;
  // a truncated file
  write_safetensors(file, single_file_tensors(official_tensors(), ""));
  fs::resize_file(file, fs::file_size(file) - 100);
  e = error_message([&] { load_transformer(file, {}); });
  EXPECT_TRUE(contains(e, file + ": tensor \"")) << e;
  EXPECT_TRUE(contains(e, "data_offsets end")) << e;
  // not a checkpoint at all
  write_text(dir + "/m.bin", "x");
  e = error_message([&] { load_transformer(dir + "/m.bin", {}); });
  EXPECT_TRUE(contains(e, "expected a folder or a .safetensors file")) << e;
  e = error_message([&] { load_transformer(dir + "/absent", {}); });
  EXPECT_TRUE(contains(e, dir + "/absent: no such folder or .safetensors file")) << e;
}

TEST(TransformerWeights, FolderErrorsName) {
  // a truncated shard
  std::string root = pipeline("trunc", official_tensors());
  const std::string shard = root + "/transformer/diffusion_pytorch_model-00001-of-00002.safetensors";
  fs::resize_file(shard, fs::file_size(shard) - 1);
  std::string e = error_message([&] { load_transformer(root, {}); });
  EXPECT_TRUE(contains(e, shard + ": tensor \"")) << e;
  // a bad config key, and geometry the kernels cannot run
  Json j = config_json();
  j["num_heads"] = "2";
  root = pipeline("badkey", official_tensors(), j);
  e = error_message([&] { load_transformer(root, {}); });
  EXPECT_TRUE(contains(e, root + "/transformer/config.json: \"num_heads\" must be an integer")) << e;
  j = config_json();
  j["num_heads"] = 16;
  root = pipeline("headdim", official_tensors(), j);
  e = error_message([&] { load_transformer(root, {}); });
  EXPECT_TRUE(contains(e, "head_dim = dim / num_heads = 4 is not a multiple of 8")) << e;
  // a pipeline folder without the transformer
  root = temp_dir("notransformer");
  write_text(root + "/model_index.json", "{}");
  e = error_message([&] { load_transformer(root, {}); });
  EXPECT_TRUE(contains(e, "without a transformer/ folder")) << e;
}
