// tf-flux2-vae encode/decode on a damaged copy of the embedded tiny pipeline: every failure is one
// clear line naming the file, tensor or flag, a non-zero exit and no output left behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/tensor.h"
#include "io/png.h"
#include "io/safetensors.h"
#include "check/random_tensor.h"
#include "tool_runner.h"

using namespace tf::hostile;
using Json = nlohmann::json;

namespace {

constexpr const char* kProgram = "tf-flux2-vae";

struct VaeCase {
  Scratch s;
  fs::path model, vae_dir, weights, image, noise, out;

  explicit VaeCase(const std::string& name) : s(name) {
    model = copy_tiny_pipeline(s / "pipeline");
    vae_dir = model / "vae";
    weights = vae_dir / "diffusion_pytorch_model.safetensors";
    image = s / "in.png";
    noise = s / "noise.safetensors";
    out = s / "out.safetensors";
    write_picture(image, 32, 32);
    write_noise(noise, {32, 4, 4});
  }
  static void write_picture(const fs::path& p, int64_t w, int64_t h) {
    tf::RgbImage img;
    img.width = w;
    img.height = h;
    img.rgb.resize(static_cast<size_t>(w * h * 3));
    for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] = static_cast<uint8_t>(i * 7);
    tf::write_png_rgb8(p.string(), img);
  }
  static void write_noise(const fs::path& p, const tf::Shape& shape, tf::DType dt = tf::DType::F32) {
    tf::write_safetensors(p.string(), {{"noise", tf::zeros(dt, shape)}});
  }
  RunResult encode() const {
    return run_program(kProgram, {"encode", "--model", model.string(), "--image", image.string(), "--noise",
                                  noise.string(), "--out", out.string()});
  }
  void expect_encode_fails(const std::vector<std::string>& names) const {
    expect_clean_failure(encode(), kProgram, names, {out});
  }
  // Edits the VAE weights' header.
  void edit_header(const std::function<void(Json&)>& edit) const { edit_safetensors_header(weights, edit); }
  // A tensor of the weights with at least `min_bytes` bytes (sorted by offset) and its entry.
  std::pair<std::string, Json> some_tensor(const Json& h, bool two_dims_non_square = false) const {
    for (auto it = h.begin(); it != h.end(); ++it) {
      if (it.key() == "__metadata__") continue;
      const Json& s = (*it)["shape"];
      if (two_dims_non_square && !(s.size() >= 2 && s[0] != s[1])) continue;
      if ((*it)["data_offsets"][1].get<uint64_t>() > (*it)["data_offsets"][0].get<uint64_t>()) return {it.key(), *it};
    }
    ADD_FAILURE() << "no suitable tensor in " << weights;
    return {};
  }
  void edit_config(const std::function<void(Json&)>& edit) const { edit_json_file(vae_dir / "config.json", edit); }
};

}  // namespace

TEST(ToolFlux2Vae, IntactPipelineEncodes) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_ok");
  RunResult r = c.encode();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(c.out));
}

TEST(ToolFlux2Vae, MissingModelFolder) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_nofolder");
  fs::remove_all(c.model);
  c.expect_encode_fails({c.model.string()});
}

TEST(ToolFlux2Vae, MissingVaeSubfolder) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_nosub");
  fs::remove_all(c.vae_dir);
  c.expect_encode_fails({"vae"});
}

TEST(ToolFlux2Vae, TruncatedWeights) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_trunc");
  std::string b = read_bytes(c.weights);
  write_bytes(c.weights, b.substr(0, b.size() / 2));
  c.expect_encode_fails({c.weights.filename().string(), "truncated"});
  write_bytes(c.weights, b.substr(0, 5));
  c.expect_encode_fails({c.weights.filename().string(), "too short"});
}

TEST(ToolFlux2Vae, HeaderLengthPastTheEndOr2To63) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_hlen");
  std::string b = read_bytes(c.weights);
  for (uint64_t n : {uint64_t(b.size()) + 1000, uint64_t(1) << 63}) {
    write_bytes(c.weights, u64_le_bytes(n) + b.substr(8));
    c.expect_encode_fails({c.weights.filename().string(), "header length"});
  }
}

TEST(ToolFlux2Vae, HeaderNotJson) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_notjson");
  std::string b = read_bytes(c.weights);
  for (size_t i = 8; i < 40; ++i) b[i] = '#';
  write_bytes(c.weights, b);
  c.expect_encode_fails({c.weights.filename().string(), "not valid JSON"});
}

TEST(ToolFlux2Vae, OffsetsReversedOverlappingOrPastTheEnd) {
  TF_REQUIRE_PROGRAM(kProgram);
  {
    VaeCase c("vae_reversed");
    std::string name;
    c.edit_header([&](Json& h) {
      name = c.some_tensor(h).first;
      Json& off = h[name]["data_offsets"];
      off = Json::array({off[1], off[0]});
    });
    c.expect_encode_fails({c.weights.filename().string(), name, "reversed"});
  }
  {
    VaeCase c("vae_overlap");
    c.edit_header([&](Json& h) {
      // a second name for the first tensor's bytes
      auto [name, entry] = c.some_tensor(h);
      h["zz.overlapping.copy"] = entry;
    });
    c.expect_encode_fails({c.weights.filename().string(), "overlap"});
  }
  {
    VaeCase c("vae_pastend");
    std::string name;
    c.edit_header([&](Json& h) {
      name = c.some_tensor(h).first;
      uint64_t big = uint64_t(1) << 40;
      Json& e = h[name];
      uint64_t n = e["data_offsets"][1].get<uint64_t>() - e["data_offsets"][0].get<uint64_t>();
      e["data_offsets"] = Json::array({big, big + n});
    });
    c.expect_encode_fails({c.weights.filename().string(), name, "past the data area"});
  }
}

TEST(ToolFlux2Vae, ShapeDisagreesWithByteSize) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_shape_bytes");
  std::string name;
  c.edit_header([&](Json& h) {
    name = c.some_tensor(h).first;
    h[name]["shape"].push_back(3);
  });
  c.expect_encode_fails({c.weights.filename().string(), name, "bytes"});
}

TEST(ToolFlux2Vae, UnknownDtype) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_dtype");
  std::string name;
  c.edit_header([&](Json& h) {
    name = c.some_tensor(h).first;
    h[name]["dtype"] = "F8_E4M3";
  });
  c.expect_encode_fails({c.weights.filename().string(), name, "unknown dtype \"F8_E4M3\""});
}

TEST(ToolFlux2Vae, MissingTensor) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_missing");
  c.edit_header([](Json& h) { h.erase("encoder.conv_in.weight"); });
  c.expect_encode_fails({"encoder.conv_in.weight"});
}

TEST(ToolFlux2Vae, MisShapedTensor) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_misshaped");
  // same bytes, axes swapped: the file is valid, the VAE must refuse the tensor by name
  c.edit_header([](Json& h) {
    Json& s = h["encoder.conv_in.weight"]["shape"];
    std::swap(s[0], s[1]);
  });
  c.expect_encode_fails({"encoder.conv_in.weight", "expected"});
}

TEST(ToolFlux2Vae, InconsistentGeometry) {
  TF_REQUIRE_PROGRAM(kProgram);
  {
    VaeCase c("vae_groups");
    c.edit_config([](Json& j) { j["norm_num_groups"] = 3; });
    c.expect_encode_fails({"config.json", "norm_num_groups"});
  }
  {
    VaeCase c("vae_widths");
    c.edit_config([](Json& j) { j["block_out_channels"] = Json::array({8, 16, 16}); });
    c.expect_encode_fails({"config.json"});
  }
  {
    VaeCase c("vae_width_vs_weights");
    c.edit_config([](Json& j) { j["block_out_channels"] = Json::array({8, 16, 16, 64}); });
    c.expect_encode_fails({"expected"});
  }
  {
    VaeCase c("vae_config_notjson");
    write_bytes(c.vae_dir / "config.json", "{\"block_out_channels\": [8, 16,");
    c.expect_encode_fails({"config.json", "not valid JSON"});
  }
}

TEST(ToolFlux2Vae, CorruptOrTruncatedPicture) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_png");
  std::string png = read_bytes(c.image);
  write_bytes(c.image, png.substr(0, png.size() / 2));
  c.expect_encode_fails({c.image.string()});
  std::string bad = png;
  for (size_t i = 40; i < bad.size() - 20; i += 3) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  write_bytes(c.image, bad);
  c.expect_encode_fails({c.image.string()});
  write_bytes(c.image, "not a picture at all");
  c.expect_encode_fails({c.image.string(), "not a PNG"});
  fs::remove(c.image);
  c.expect_encode_fails({c.image.string()});
}

TEST(ToolFlux2Vae, SizeNotAMultipleOf16) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_size16");
  VaeCase::write_picture(c.image, 24, 32);
  c.expect_encode_fails({c.image.string(), "multiples of 16"});
}

TEST(ToolFlux2Vae, AbsurdPictureSize) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_absurd");
  // a valid 100000x100000 IHDR and no pixels: refused stating its size and the limit
  write_bytes(c.image, png_header_only(100000, 100000));
  c.expect_encode_fails({c.image.string(), "100000x100000", "16384"});
  write_bytes(c.image, png_header_only(16400, 16));
  c.expect_encode_fails({c.image.string(), "16400x16", "16384"});
}

TEST(ToolFlux2Vae, NoiseOfTheWrongShape) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_noise");
  VaeCase::write_noise(c.noise, {32, 4, 8});
  c.expect_encode_fails({c.noise.string(), "noise", "expected F32 [32, 4, 4]"});
  VaeCase::write_noise(c.noise, {32, 4, 4}, tf::DType::BF16);
  c.expect_encode_fails({c.noise.string(), "noise"});
  tf::write_safetensors(c.noise.string(), {{"other", tf::zeros(tf::DType::F32, {32, 4, 4})}});
  c.expect_encode_fails({c.noise.string(), "noise"});
  fs::remove(c.noise);
  c.expect_encode_fails({c.noise.string()});
}

TEST(ToolFlux2Vae, UnwritableOutput) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_unwritable");
  fs::path out = c.s / "no-such-folder" / "out.safetensors";
  RunResult r = run_program(kProgram, {"encode", "--model", c.model.string(), "--image", c.image.string(), "--noise",
                                       c.noise.string(), "--out", out.string()});
  expect_clean_failure(r, kProgram, {out.string()}, {out});
  // a parent that is a file
  write_bytes(c.s / "afile", "x");
  out = c.s / "afile" / "out.safetensors";
  r = run_program(kProgram, {"encode", "--model", c.model.string(), "--image", c.image.string(), "--noise",
                             c.noise.string(), "--out", out.string()});
  expect_clean_failure(r, kProgram, {out.string()}, {});
}

TEST(ToolFlux2Vae, DecodeBadLatentsAndUnwritablePicture) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_decode");
  fs::path lat = c.s / "latents.safetensors", png = c.s / "out.png";
  tf::write_safetensors(lat.string(), {{"latents", tf::zeros(tf::DType::F32, {16, 4, 4})}});
  RunResult r = run_program(kProgram, {"decode", "--model", c.model.string(), "--latents", lat.string(), "--out", png.string()});
  expect_clean_failure(r, kProgram, {lat.string(), "latents"}, {png});
  tf::write_safetensors(lat.string(), {{"latents", tf::zeros(tf::DType::F32, {32, 4, 4})}});
  fs::path bad_out = c.s / "no-such-folder" / "out.png";
  r = run_program(kProgram, {"decode", "--model", c.model.string(), "--latents", lat.string(), "--out", bad_out.string()});
  expect_clean_failure(r, kProgram, {bad_out.string()}, {bad_out});
  r = run_program(kProgram, {"decode", "--model", c.model.string(), "--tokens", lat.string(), "--height", "20",
                             "--width", "32", "--out", png.string()});
  expect_clean_failure(r, kProgram, {"--height"}, {png});
}

// Latents with diffusers' leading batch dimension of 1 decode to the same picture.
TEST(ToolFlux2Vae, DecodeTakesLatentsWithABatchOfOne) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_decode_batch");
  fs::path lat = c.s / "latents.safetensors", png = c.s / "out.png", png1 = c.s / "out1.png";
  const tf::Tensor z = tf::check::random_normal_tensor(tf::DType::F32, {32, 4, 4}, 3, 1.0f);
  tf::write_safetensors(lat.string(), {{"latents", z}});
  ASSERT_EQ(run_program(kProgram, {"decode", "--model", c.model.string(), "--latents", lat.string(), "--out", png.string()}).exit_code, 0);
  tf::write_safetensors(lat.string(), {{"latents", z.reshaped({1, 32, 4, 4})}});
  const RunResult r = run_program(kProgram, {"decode", "--model", c.model.string(), "--latents", lat.string(), "--out", png1.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_bytes(png), read_bytes(png1));
  tf::write_safetensors(lat.string(), {{"latents", z.reshaped({2, 16, 4, 4})}});
  expect_clean_failure(run_program(kProgram, {"decode", "--model", c.model.string(), "--latents", lat.string(), "--out", png.string() + "x"}),
                       kProgram, {lat.string(), "latents"}, {png.string() + "x"});
}

TEST(ToolFlux2Vae, BadFlags) {
  TF_REQUIRE_PROGRAM(kProgram);
  VaeCase c("vae_flags");
  RunResult r = run_program(kProgram, {"encode", "--model", c.model.string(), "--out", c.out.string()});
  expect_clean_failure(r, kProgram, {"--image"}, {c.out});
  r = run_program(kProgram, {"encode", "--model", c.model.string(), "--image", c.image.string(), "--mean", "--noise",
                             c.noise.string(), "--out", c.out.string()});
  expect_clean_failure(r, kProgram, {"--mean"}, {c.out});
  r = run_program(kProgram, {"encode", "--model", c.model.string(), "--image", c.image.string(), "--mean", "--out",
                             c.out.string(), "--device", "tpu"});
  expect_clean_failure(r, kProgram, {"tpu"}, {c.out});
  r = run_program(kProgram, {"frobnicate"});
  expect_clean_failure(r, kProgram, {"frobnicate"});
}
