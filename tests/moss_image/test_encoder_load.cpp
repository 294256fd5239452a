// Encoder config and weights: geometry read and refused by name, the three tensor layouts, dtype
// and shape checks naming the tensor, small parameters as stored or rounded.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/embed/embedding.h"
#include "core/error.h"
#include "families/moss_image/encoder/encoder.h"
#include "io/checkpoint.h"
#include "io/json_file.h"
#include "io/safetensors.h"

using namespace tf;
using namespace tf::moss_image;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = std::string(TF_TEST_DATA) + "/tiny-pipeline/text_encoder";
const std::string kTinyB = std::string(TF_TEST_DATA) + "/moss-tiny-b/text_encoder";

std::string temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("tf_enc_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The tiny checkpoint rewritten as one file with `prefix` instead of model.language_model., the
// vision tower and mtp dropped; `edit` may change the tensors.
std::string relayout(const std::string& name, const std::string& prefix,
                     const std::function<void(NamedTensors&)>& edit = {}) {
  std::string dir = temp_dir(name);
  Checkpoint c = Checkpoint::open_folder(kTiny);
  NamedTensors out;
  const std::string lm = "model.language_model.";
  for (const std::string& n : c.names())
    if (n.rfind(lm, 0) == 0) out.emplace_back(prefix + n.substr(lm.size()), c.get(n));
  if (edit) edit(out);
  write_safetensors(dir + "/model.safetensors", out);
  fs::copy_file(kTiny + "/config.json", dir + "/config.json");
  return dir;
}

std::vector<int32_t> some_ids() { return {4001, 17, 900, 4095, 3, 3, 250}; }

}  // namespace

TEST(EncoderConfig, ReadsTheTinyGeometries) {
  EncoderConfig a = load_encoder_config(kTiny + "/config.json");
  EXPECT_EQ(a.hidden, 64);
  EXPECT_EQ(a.layers, 4);
  EXPECT_EQ(a.full_attention, (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(a.rotary_dim, 8);
  EXPECT_FALSE(a.is_released_geometry());
  EncoderConfig b = load_encoder_config(kTinyB + "/config.json");
  EXPECT_EQ(b.full_attention_layers(), 3);
  EXPECT_NE(b.lin_key_dim, b.lin_value_dim);
  EXPECT_NE(b.summary().find("not the released geometry"), std::string::npos);
}

TEST(EncoderConfig, RecognisesTheReleasedGeometryAndBareTextConfigs) {
  std::string dir = temp_dir("released");
  Json j = {{"model_type", "qwen3_5_text"}, {"vocab_size", 248320}, {"hidden_size", 4096},
            {"intermediate_size", 12288}, {"num_hidden_layers", 32}, {"num_attention_heads", 16},
            {"num_key_value_heads", 4}, {"head_dim", 256}, {"linear_num_key_heads", 16},
            {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
            {"linear_conv_kernel_dim", 4}, {"rms_norm_eps", 1e-6},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1e7}, {"partial_rotary_factor", 0.25}}}};
  write_text(dir + "/config.json", j.dump());
  EncoderConfig c = load_encoder_config(dir + "/config.json");
  EXPECT_TRUE(c.is_released_geometry());
  EXPECT_NE(c.summary().find("the released Qwen3.5-9B geometry"), std::string::npos);
  EXPECT_EQ(c.rotary_dim, 64);
  EXPECT_TRUE(c.full_attention[3] && c.full_attention[31] && !c.full_attention[0]);
}

TEST(EncoderConfig, RefusesWhatTheKernelsCannotRunByName) {
  std::string dir = temp_dir("refuse");
  Json base = load_json_file(kTiny + "/config.json");
  auto expect_error = [&](const std::function<void(Json&)>& edit, const std::string& needle) {
    Json j = base;
    edit(j["text_config"]);
    write_text(dir + "/config.json", j.dump());
    try {
      load_encoder_config(dir + "/config.json");
      ADD_FAILURE() << "accepted a config that should name " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([](Json& t) { t["num_attention_heads"] = 3; t["num_key_value_heads"] = 2; }, "num_key_value_heads");
  expect_error([](Json& t) { t["linear_num_value_heads"] = 5; }, "linear_num_key_heads");
  expect_error([](Json& t) { t["hidden_act"] = "gelu"; }, "hidden_act");
  expect_error([](Json& t) { t["layer_types"][1] = "sliding_attention"; }, "layer_types");
  expect_error([](Json& t) { t["rope_parameters"]["rope_type"] = "yarn"; }, "rope_type");
  expect_error([](Json& t) { t.erase("hidden_size"); }, "hidden_size");
}

TEST(EncoderWeights, ThreeLayoutsGiveTheSameRows) {
  Encoder ref = Encoder::load(kTiny, {});
  EXPECT_EQ(ref.weights().prefix, "model.language_model.");
  Tensor want = ref.forward(some_ids(), single_sequence(7));
  for (std::string prefix : {"model.", ""}) {
    std::string dir = relayout(prefix.empty() ? "bare" : "model", prefix);
    Encoder e = Encoder::load(dir, {});
    EXPECT_EQ(e.weights().prefix, prefix);
    Tensor got = e.forward(some_ids(), single_sequence(7));
    EXPECT_EQ(0, std::memcmp(got.data, want.data, want.nbytes())) << "layout '" << prefix << "'";
  }
}

TEST(EncoderWeights, SmallParamsAsStoredOrRounded) {
  Encoder rounded = Encoder::load(kTiny, {Device::CPU, true});
  Encoder stored = Encoder::load(kTiny, {Device::CPU, false});
  EXPECT_EQ(rounded.weights().layers[0].delta.A_log.dtype, DType::BF16);
  EXPECT_EQ(stored.weights().layers[0].delta.A_log.dtype, DType::F32);
  EXPECT_EQ(stored.weights().layers[0].delta.norm.dtype, DType::F32);
  Tensor a = rounded.forward(some_ids(), single_sequence(7)), b = stored.forward(some_ids(), single_sequence(7));
  EXPECT_NE(0, std::memcmp(a.data, b.data, a.nbytes())) << "rounding A_log and the gated norm's weight must show";
}

TEST(EncoderWeights, ErrorsNameTheTensor) {
  auto expect_error = [&](const std::string& name, const std::function<void(NamedTensors&)>& edit,
                          const std::string& needle) {
    std::string dir = relayout(name, "model.", edit);
    try {
      Encoder::load(dir, {});
      ADD_FAILURE() << "loaded a checkpoint that should name " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("missing", [](NamedTensors& t) {
    std::erase_if(t, [](auto& p) { return p.first == "model.layers.3.self_attn.k_norm.weight"; });
  }, "model.layers.3.self_attn.k_norm.weight");
  expect_error("shape", [](NamedTensors& t) {
    for (auto& [n, x] : t)
      if (n == "model.layers.1.linear_attn.in_proj_z.weight") x = x.rows(0, x.dim(0) - 1);
  }, "model.layers.1.linear_attn.in_proj_z.weight");
  expect_error("dtype", [](NamedTensors& t) {
    for (auto& [n, x] : t)
      if (n == "model.layers.0.mlp.up_proj.weight") x = empty(DType::F16, x.shape);
  }, "model.layers.0.mlp.up_proj.weight");
  expect_error("noembed", [](NamedTensors& t) {
    std::erase_if(t, [](auto& p) { return p.first == "model.embed_tokens.weight"; });
  }, "embed_tokens.weight");
}

TEST(Encoder, PacksOfAtMostTheRowLimitGiveEachPromptItsOwnRows) {
  // 100 + 60 rows exceed the limit: [100] runs alone, then [60, 0, 20] together; progress climbs
  // to the end once over both packs
  Encoder e = Encoder::load(kTiny, {});
  const SeqOffsets offs = {0, 100, 160, 160, 180};
  std::vector<int32_t> ids;
  for (int64_t t = 0; t < offs.back(); ++t) ids.push_back(static_cast<int32_t>((t * 2654435761u) % 4096));
  std::vector<std::pair<int64_t, int64_t>> seen;
  Tensor packed = e.forward(ids, offs, [&](const ProgressEvent& p) { seen.emplace_back(p.done, p.total); });
  ASSERT_EQ(packed.shape, (Shape{180, e.config().hidden}));
  for (size_t s = 0; s + 1 < offs.size(); ++s) {
    const int64_t n = offs[s + 1] - offs[s];
    if (n == 0) continue;
    Tensor alone = e.forward(std::vector<int32_t>(ids.begin() + offs[s], ids.begin() + offs[s + 1]), single_sequence(n));
    EXPECT_EQ(0, std::memcmp(alone.data, packed.rows(offs[s], offs[s + 1]).data, alone.nbytes())) << "prompt " << s;
  }
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i].first, seen[i - 1].first);
  EXPECT_EQ(seen.back().first, seen.back().second);
  EXPECT_EQ(seen.back().second, 2 * e.steps());
}

TEST(Encoder, ForwardGivesTheBytesOfItsStepsChained) {
  // the forward fuses each layer's last residual add with the next norm; the steps keep them apart
  for (const std::string& dir : {kTiny, kTinyB}) {
    Encoder e = Encoder::load(dir, {});
    const std::vector<int32_t> ids = some_ids();
    const int64_t n = static_cast<int64_t>(ids.size());
    Tensor out = e.forward(ids, single_sequence(n));
    Tensor id_rows = empty(DType::I32, {n});
    std::copy(ids.begin(), ids.end(), id_rows.ptr<int32_t>());
    Tensor rows = empty(DType::BF16, {n, e.config().hidden});
    embedding(e.weights().embed_tokens, id_rows, rows);
    for (int64_t s = 0; s < e.steps(); ++s) rows = e.run_step(s, rows, single_sequence(n));
    ASSERT_EQ(out.shape, rows.shape);
    EXPECT_EQ(0, std::memcmp(out.data, rows.data, out.nbytes())) << dir;
  }
}

TEST(Encoder, RefusesIdsOutsideTheVocabularyAndBadSteps) {
  Encoder e = Encoder::load(kTiny, {});
  EXPECT_THROW(e.forward({1, 4096}, single_sequence(2)), Error);
  EXPECT_THROW(e.forward({1, -1}, single_sequence(2)), Error);
  Tensor rows = empty(DType::BF16, {2, 64});
  EXPECT_THROW(e.run_step(5, rows, single_sequence(2)), Error);
  EXPECT_THROW(e.run_step(0, empty(DType::BF16, {2, 63}), single_sequence(2)), Error);
}
