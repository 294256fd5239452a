// The FLUX.2 VAE family on the tiny checkpoint: config, weights (bf16 and an fp32 copy), tokens
// and their inverse, and the reference gate on the committed cases with planted faults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "check/gate/flux2_vae.h"
#include "core/bf16.h"
#include "core/error.h"
#include "families/flux2_vae/model.h"
#include "families/flux2_vae/tokens.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

namespace {

namespace fs = std::filesystem;
using namespace tf::flux2_vae;

const std::string kTiny = std::string(TF_TEST_DATA) + "/tiny-pipeline";
const std::string kCase32 = std::string(TF_TEST_DATA) + "/vae/case-32x32.safetensors";
const std::string kCase48x64 = std::string(TF_TEST_DATA) + "/vae/case-48x64.safetensors";

std::string temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tf-vae-test-" + std::to_string(::getpid())) / name;
  fs::create_directories(d);
  return d.string();
}

TEST(Flux2VaeConfig, TinyLoadsWithItsOwnDecoderWidths) {
  const Config c = load_config(kTiny + "/vae");
  EXPECT_EQ(c.block_out_channels, (std::vector<int64_t>{8, 16, 16, 32}));
  EXPECT_EQ(c.decoder_widths(), (std::vector<int64_t>{8, 16, 24, 32}));
  EXPECT_EQ(c.token_width(), 128);
  EXPECT_EQ(c.picture_multiple(), 16);
  EXPECT_FALSE(c.is_released_geometry());
  EXPECT_TRUE(Config{}.is_released_geometry());
  Config small;
  small.decoder_block_out_channels = {96, 192, 384, 384};  // MOSS-Image's vae/
  EXPECT_TRUE(small.is_released_geometry());
  EXPECT_NE(small.summary().find("MOSS-Image's small decoder"), std::string::npos) << small.summary();
  small.decoder_block_out_channels = {96, 192, 384, 385};
  EXPECT_FALSE(small.is_released_geometry());
}

TEST(Flux2VaeConfig, GroupsThatDoNotDivideAWidthAreRefused) {
  const std::string d = temp_dir("badcfg");
  std::ofstream(d + "/config.json") << R"({"_class_name": "AutoencoderKLFlux2", "block_out_channels": [8, 16, 16, 30],
                                         "norm_num_groups": 4})";
  try {
    load_config(d);
    FAIL() << "expected an error";
  } catch (const tf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("norm_num_groups"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
  }
}

TEST(Flux2VaeWeights, AnF32FileIsRoundedToTheSameBf16) {
  // An fp32 copy of the tiny checkpoint (values perturbed below bf16's half-ulp so rounding matters).
  const std::string src = kTiny + "/vae";
  const std::string dst = temp_dir("f32");
  fs::copy_file(src + "/config.json", dst + "/config.json", fs::copy_options::overwrite_existing);
  const auto f = tf::SafetensorsFile::open(src + "/diffusion_pytorch_model.safetensors");
  tf::NamedTensors out;
  for (const auto& [name, e] : f->entries()) {
    tf::Tensor t = f->get(name);
    if (t.dtype == tf::DType::BF16) {
      tf::Tensor g = tf::empty(tf::DType::F32, t.shape);
      for (int64_t i = 0; i < t.numel(); ++i) {
        const float v = tf::float_from_bf16_bits(t.ptr<uint16_t>()[i]);
        g.ptr<float>()[i] = v * (1.0f + 0x1.0p-10f);  // rounds back to v
      }
      t = g;
    }
    out.push_back({name, t});
  }
  tf::write_safetensors(dst + "/diffusion_pytorch_model.safetensors", out);
  const Vae a = Vae::load(kTiny, tf::Device::CPU), b = Vae::load(dst, tf::Device::CPU);
  const auto& wa = a.weights().encoder.down[1].resnets[0];
  const auto& wb = b.weights().encoder.down[1].resnets[0];
  ASSERT_EQ(wb.conv1.w.dtype, tf::DType::BF16);
  EXPECT_EQ(std::memcmp(wa.conv1.w.data, wb.conv1.w.data, wa.conv1.w.nbytes()), 0);
  EXPECT_TRUE(wa.has_shortcut);  // 8 -> 16 channels
  EXPECT_EQ(std::memcmp(wa.shortcut.w.data, wb.shortcut.w.data, wa.shortcut.w.nbytes()), 0);
  EXPECT_EQ(a.weights().bn_var, b.weights().bn_var);
}

TEST(Flux2VaeWeights, AMissingTensorIsNamed) {
  const std::string dst = temp_dir("missing");
  fs::copy_file(kTiny + "/vae/config.json", dst + "/config.json", fs::copy_options::overwrite_existing);
  const auto f = tf::SafetensorsFile::open(kTiny + "/vae/diffusion_pytorch_model.safetensors");
  tf::NamedTensors out;
  for (const auto& [name, e] : f->entries())
    if (name != "decoder.up_blocks.2.resnets.0.conv_shortcut.weight") out.push_back({name, f->get(name)});
  tf::write_safetensors(dst + "/diffusion_pytorch_model.safetensors", out);
  try {
    Vae::load(dst, tf::Device::CPU);
    FAIL() << "expected an error";
  } catch (const tf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("decoder.up_blocks.2.resnets.0.conv_shortcut.weight"), std::string::npos)
        << e.what();
  }
}

TEST(Flux2VaeTokens, PatchOrderAndPaddingRows) {
  // z[c, y, x] = 1000 c + 10 y + x; no normalisation (mean 0, var 1 - eps).
  const int64_t cz = 32, h = 4, w = 6;
  tf::Tensor z = tf::empty(tf::DType::F32, {cz, h, w});
  for (int64_t c = 0; c < cz; ++c)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) z.ptr<float>()[(c * h + y) * w + x] = 1000.0f * c + 10.0f * y + x;
  const std::vector<float> mean(128, 0.0f), var(128, 1.0f);
  const tf::Tensor t = tokens_from_latents(z, mean, var, 0.0);
  ASSERT_EQ(t.shape, (tf::Shape{5 + 2 * 3, 128}));
  for (int64_t i = 0; i < 5 * 128; ++i) ASSERT_EQ(t.ptr<float>()[i], 0.0f);
  // token (i=1, j=2) is row 5 + 1*3 + 2; feature 4c + 2dy + dx = z[c, 2 + dy, 4 + dx]
  const float* row = t.ptr<float>() + (5 + 5) * 128;
  EXPECT_EQ(row[4 * 7 + 2 * 1 + 0], 7000.0f + 10.0f * 3 + 4);
  EXPECT_EQ(row[4 * 7 + 2 * 0 + 1], 7000.0f + 10.0f * 2 + 5);
  const tf::Tensor back = latents_from_tokens(t, h, w, mean, var, 0.0);
  EXPECT_EQ(std::memcmp(back.data, z.data, z.nbytes()), 0);
  const tf::Tensor back2 = latents_from_tokens(t.rows(5, t.dim(0)), h, w, mean, var, 0.0);
  EXPECT_EQ(std::memcmp(back2.data, z.data, z.nbytes()), 0);
  tf::Tensor bad = t;
  bad = tf::empty(tf::DType::F32, t.shape);
  std::memcpy(bad.data, t.data, t.nbytes());
  bad.ptr<float>()[3 * 128 + 1] = 0.5f;
  EXPECT_THROW(latents_from_tokens(bad, h, w, mean, var, 0.0), tf::Error);
}

TEST(Flux2VaeTokens, NormalisationRoundTripsWithinFp32) {
  const Vae v = Vae::load(kTiny, tf::Device::CPU, {false, true});
  tf::Tensor z = tf::empty(tf::DType::F32, {32, 4, 4});
  for (int64_t i = 0; i < z.numel(); ++i) z.ptr<float>()[i] = std::sin(0.37f * i) * 3.0f;
  const auto& w = v.weights();
  const tf::Tensor t = tokens_from_latents(z, w.bn_mean, w.bn_var, 1e-4);
  const tf::Tensor back = latents_from_tokens(t, 4, 4, w.bn_mean, w.bn_var, 1e-4);
  for (int64_t i = 0; i < z.numel(); ++i) ASSERT_NEAR(back.ptr<float>()[i], z.ptr<float>()[i], 1e-5);
}

TEST(Flux2VaePosterior, ClampsLogvarAndKeepsNan) {
  tf::Tensor m = tf::empty(tf::DType::F32, {2, 1, 3});  // Cz = 1: mean row, logvar row
  const float in[6] = {1.0f, 2.0f, 3.0f, 100.0f, -100.0f, NAN};
  std::memcpy(m.data, in, sizeof in);
  tf::Tensor n = tf::empty(tf::DType::F32, {1, 1, 3});
  for (int i = 0; i < 3; ++i) n.ptr<float>()[i] = 1.0f;
  const tf::Tensor z = posterior_latents(m, &n);
  EXPECT_EQ(z.ptr<float>()[0], 1.0f + std::exp(10.0f));
  EXPECT_EQ(z.ptr<float>()[1], 2.0f + std::exp(-15.0f));
  EXPECT_TRUE(std::isnan(z.ptr<float>()[2]));
  const tf::Tensor mean = posterior_latents(m, nullptr);
  EXPECT_EQ(mean.ptr<float>()[2], 3.0f);
}

tf::check::gate::GateReport gate(const std::string& cs, const std::string& plant, std::string* log_text = nullptr) {
  static const Vae v = Vae::load(kTiny, tf::Device::CPU);
  std::ostringstream log;
  auto r = tf::check::gate::run_flux2_vae_gate(v, cs, tf::check::gate::Plant::parse(plant, tf::check::gate::flux2_vae_plants()), log);
  if (log_text) *log_text = log.str();
  return r;
}

TEST(Flux2VaeGate, TinyCasesPassWithEveryStepChecked) {
  for (const std::string& cs : {kCase32, kCase48x64}) {
    std::string log;
    const auto r = gate(cs, "", &log);
    EXPECT_TRUE(r.passed()) << cs << "\n" << log;
    EXPECT_EQ(r.steps.size(), 16u);
    EXPECT_TRUE(r.repeat_same);
    EXPECT_FALSE(r.packing_same.has_value());
    ASSERT_NE(r.fact("picture"), nullptr);
    EXPECT_TRUE(r.fact("picture")->ok);
    for (const auto& s : r.steps) EXPECT_LT(s.verdict.ours.worst_row, 1e-4) << s.name;  // fp32-class
    EXPECT_NE(log.find(", repeat identical, packing -, picture "), std::string::npos) << log;
  }
}

TEST(Flux2VaeGate, PlantedRowFails) {
  const auto r = gate(kCase32, "row");
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(r.step("tokens.sample")->verdict.pass);  // the default step
  const auto r2 = gate(kCase48x64, "row@enc.conv_in");
  EXPECT_FALSE(r2.passed());
  EXPECT_FALSE(r2.steps[0].verdict.pass);
  EXPECT_TRUE(r2.step("dec.out")->verdict.pass);
}

TEST(Flux2VaeGate, PlantedNonZeroPaddingRowFails) {
  const auto r = gate(kCase32, "padding-row");
  EXPECT_FALSE(r.passed());
  EXPECT_TRUE(std::isinf(r.step("tokens.sample")->verdict.ours.worst_row));
}

TEST(Flux2VaeGate, PlantedDifferingRepeatFails) {
  const auto r = gate(kCase32, "repeat");
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(r.repeat_same);
  EXPECT_TRUE(r.steps_pass());
}

}  // namespace

namespace {

// diffusers' names -> BFL's original ones (attention linears as 1x1 convs, up stages reversed).
std::string bfl_name(std::string n, int stages) {
  auto rep = [&n](const std::string& a, const std::string& b) {
    if (const size_t p = n.find(a); p != std::string::npos) n.replace(p, a.size(), b);
  };
  if (n.rfind("decoder.up_blocks.", 0) == 0) {
    const int i = n[18] - '0';
    n = "decoder.up." + std::to_string(stages - 1 - i) + n.substr(19);
  }
  rep("down_blocks.", "down.");
  rep(".resnets.", ".block.");
  rep("conv_shortcut", "nin_shortcut");
  rep("downsamplers.0.conv", "downsample.conv");
  rep("upsamplers.0.conv", "upsample.conv");
  rep("mid_block.block.0", "mid.block_1");
  rep("mid_block.block.1", "mid.block_2");
  rep("mid_block.attentions.0.group_norm", "mid.attn_1.norm");
  rep("mid_block.attentions.0.to_q", "mid.attn_1.q");
  rep("mid_block.attentions.0.to_k", "mid.attn_1.k");
  rep("mid_block.attentions.0.to_v", "mid.attn_1.v");
  rep("mid_block.attentions.0.to_out.0", "mid.attn_1.proj_out");
  rep("conv_norm_out", "norm_out");
  if (n.rfind("quant_conv", 0) == 0) n = "encoder." + n;
  if (n.rfind("post_quant_conv", 0) == 0) n = "decoder." + n;
  return n;
}

TEST(Flux2VaeWeights, BflLayoutLoadsToTheSameModel) {
  const std::string dst = temp_dir("bfl");
  fs::copy_file(kTiny + "/vae/config.json", dst + "/config.json", fs::copy_options::overwrite_existing);
  const auto f = tf::SafetensorsFile::open(kTiny + "/vae/diffusion_pytorch_model.safetensors");
  tf::NamedTensors out;
  for (const auto& [name, e] : f->entries()) {
    tf::Tensor t = f->get(name);
    if (name.find(".to_") != std::string::npos && t.rank() == 2) t = t.reshaped({t.dim(0), t.dim(1), 1, 1});
    out.push_back({bfl_name(name, 4), t});
  }
  tf::write_safetensors(dst + "/diffusion_pytorch_model.safetensors", out);
  const Vae a = Vae::load(kTiny, tf::Device::CPU), b = Vae::load(dst, tf::Device::CPU);
  EXPECT_EQ(b.weights().layout, Layout::BFL);
  std::ostringstream log;
  EXPECT_TRUE(tf::check::gate::run_flux2_vae_gate(b, kCase32, {}, log).passed()) << log.str();
}

// The model's encode and decode hand each stage's output GroupNorm statistics to the next (run_stages); on the CPU
// those are group_norm's own numbers, so the bytes equal the stages run each alone (the steps the gate checks).
TEST(Flux2VaeStages, HandingOnStatisticsGivesTheStepsBytes) {
  const Vae v = Vae::load(kTiny, tf::Device::CPU);
  const int64_t cz = v.config().latent_channels;
  tf::Tensor x = tf::empty(tf::DType::F32, {3, 32, 32}), z = tf::empty(tf::DType::F32, {cz, 4, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] = std::sin(0.37f * float(i));
  for (int64_t i = 0; i < z.numel(); ++i) z.ptr<float>()[i] = std::cos(0.91f * float(i));
  for (const bool enc : {true, false}) {
    const tf::Tensor& in = enc ? x : z;
    const tf::Tensor chained = enc ? v.run_encoder(in) : v.run_decoder(in);
    const tf::Tensor alone = tf::run_steps(enc ? v.encoder() : v.decoder(), in);
    ASSERT_EQ(chained.shape, alone.shape);
    EXPECT_EQ(std::memcmp(chained.data, alone.data, alone.nbytes()), 0) << (enc ? "encoder" : "decoder");
  }
}

}  // namespace
