// tf-moss-image generate on the embedded tiny pipeline: a prompt becomes a PNG with the same bytes on
// every run and thread count; precomputed rows and a noise file give the bytes the prompt and seed
// give; bad requests and broken pipeline folders are one clear line naming the flag or file, a
// non-zero exit and no PNG.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "families/moss_image/sampler/noise.h"
#include "io/png.h"
#include "io/safetensors.h"
#include "tool_runner.h"

using namespace tf::hostile;

namespace {

constexpr const char* kProgram = "tf-moss-image";
const std::string kModel = std::string(TF_TEST_DATA) + "/tiny-pipeline";

struct GenerateCase {
  Scratch s;
  fs::path prompt, negative, out;
  explicit GenerateCase(const std::string& name) : s(name) {
    prompt = s / "prompt.txt";
    negative = s / "negative.txt";
    out = s / "picture.png";
    write_bytes(prompt, "A red fox in the snow, watercolour.");
    write_bytes(negative, "");
  }
  RunResult run(std::vector<std::string> extra = {}, const std::string& model = kModel) const {
    return go({"--model", model, "--prompt-file", prompt.string()}, extra);
  }
  RunResult run_rows(const fs::path& rows, std::vector<std::string> extra = {}) const {
    return go({"--model", kModel, "--rows", rows.string()}, extra);
  }
  // A small quick picture unless `extra` names its own size or steps.
  RunResult go(std::vector<std::string> args, const std::vector<std::string>& extra) const {
    args.insert(args.begin(), "generate");
    for (auto [flag, value] : {std::pair<const char*, const char*>{"--width", "32"}, {"--height", "48"}, {"--steps", "3"}})
      if (std::find(extra.begin(), extra.end(), flag) == extra.end()) args.insert(args.end(), {flag, value});
    args.insert(args.end(), {"--out", out.string()});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_program(kProgram, args);
  }
};

}  // namespace

TEST(GenerateTool, APromptBecomesAPictureWithTheSameBytesEveryRun) {
  TF_REQUIRE_PROGRAM(kProgram);
  GenerateCase c("generate_ok");
  const fs::path latents = c.s / "latents.safetensors";
  const RunResult first = c.run({"--seed", "7", "--save-latents", latents.string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const tf::RgbImage pic = tf::read_png_rgb8(c.out.string());
  EXPECT_EQ(pic.width, 32);
  EXPECT_EQ(pic.height, 48);
  EXPECT_EQ(tf::SafetensorsFile::open(latents.string())->get("latents").shape, (tf::Shape{128, 3, 2}));
  const std::string bytes = read_bytes(c.out);
  ASSERT_EQ(c.run({"--seed", "7"}).exit_code, 0);
  EXPECT_EQ(read_bytes(c.out), bytes) << "a second run gave other bytes";
  ::setenv("TF_THREADS", "1", 1);
  const RunResult one = c.run({"--seed", "7"});
  ::unsetenv("TF_THREADS");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(read_bytes(c.out), bytes) << "the picture depends on the thread count";
  ASSERT_EQ(c.run({"--seed", "8"}).exit_code, 0);
  EXPECT_NE(read_bytes(c.out), bytes) << "--seed changed nothing";
  // torch reads a negative seed as its two's complement and seeds MT19937 with the low 32 bits
  ASSERT_EQ(c.run({"--seed", "-5"}).exit_code, 0);
  const std::string negative = read_bytes(c.out);
  ASSERT_EQ(c.run({"--seed", "4294967291"}).exit_code, 0);
  EXPECT_EQ(read_bytes(c.out), negative) << "--seed -5 is not 2^64 - 5, whose low 32 bits are 4294967291";
  ASSERT_EQ(c.run({"--seed", "7", "--guidance", "1"}).exit_code, 0);
  EXPECT_NE(read_bytes(c.out), bytes) << "--guidance changed nothing";
  ASSERT_EQ(c.run({"--seed", "7", "--negative-file", c.prompt.string()}).exit_code, 0);
  EXPECT_NE(read_bytes(c.out), bytes) << "--negative-file changed nothing";
}

TEST(GenerateTool, RowsAndNoiseFilesGiveThePromptsAndSeedsBytes) {
  TF_REQUIRE_PROGRAM(kProgram);
  GenerateCase c("generate_rows");
  ASSERT_EQ(c.run({"--seed", "11"}).exit_code, 0);
  const std::string bytes = read_bytes(c.out);
  const fs::path rows = c.s / "rows.safetensors", noise = c.s / "noise.safetensors";
  const RunResult enc = run_program(kProgram, {"encode", "--model", kModel, "--prompt-file", c.prompt.string(),
                                               "--negative-file", c.negative.string(), "--out", rows.string()});
  ASSERT_EQ(enc.exit_code, 0) << enc.err;
  const RunResult from_rows = c.run_rows(rows, {"--seed", "11"});
  ASSERT_EQ(from_rows.exit_code, 0) << from_rows.err;
  EXPECT_EQ(read_bytes(c.out), bytes) << "--rows from tf-moss-image encode gave other bytes than the prompt";
  tf::write_safetensors(noise.string(), {{"noise", tf::moss_image::torch_randn_f32({1, 128, 3, 2}, 11)}});
  const RunResult from_noise = c.run({"--noise", noise.string()});
  ASSERT_EQ(from_noise.exit_code, 0) << from_noise.err;
  EXPECT_EQ(read_bytes(c.out), bytes) << "--noise with seed 11's noise gave other bytes than --seed 11";
}

TEST(GenerateTool, BadRequestsAreCleanErrors) {
  TF_REQUIRE_PROGRAM(kProgram);
  GenerateCase c("generate_bad");
  expect_clean_failure(c.run({"--width", "40"}), kProgram, {"--width 40", "multiple of 16"}, {c.out});
  expect_clean_failure(c.run({"--height", "100000"}), kProgram, {"--height 100000"}, {c.out});
  expect_clean_failure(c.run({"--steps", "0"}), kProgram, {"--steps 0"}, {c.out});
  expect_clean_failure(c.run({"--guidance", "-1"}), kProgram, {"--guidance"}, {c.out});
  expect_clean_failure(c.run({"--shift", "0"}), kProgram, {"--shift"}, {c.out});
  for (const char* seed : {"18446744073709551616", "-9223372036854775809", "1.5", "7x", ""})
    expect_clean_failure(c.run({"--seed", seed}), kProgram, {"--seed", "manual_seed's range"}, {c.out});
  expect_clean_failure(c.run({"--max-memory", "0.001"}), kProgram, {"--width/--height", "GiB"}, {c.out});
  const fs::path noise = c.s / "noise.safetensors";
  tf::write_safetensors(noise.string(), {{"noise", tf::moss_image::torch_randn_f32({128, 2, 3}, 1)}});
  expect_clean_failure(c.run({"--noise", noise.string()}), kProgram, {"--noise", "[128, 3, 2]"}, {c.out});
  write_bytes(c.prompt, "bad \xff utf-8");
  expect_clean_failure(c.run(), kProgram, {"--prompt-file"}, {c.out});
  const fs::path rows = c.s / "rows.safetensors";
  tf::write_safetensors(rows.string(), {{"prompt.rows", tf::empty(tf::DType::BF16, {4, 64})}});
  expect_clean_failure(c.run_rows(rows), kProgram, {"--rows", "negative.rows"}, {c.out});
  tf::write_safetensors(rows.string(), {{"prompt.rows", tf::empty(tf::DType::BF16, {4, 63})},
                                        {"negative.rows", tf::empty(tf::DType::BF16, {4, 64})}});
  expect_clean_failure(c.run_rows(rows), kProgram, {"--rows", "prompt.rows", "[n, 64]"}, {c.out});
}

TEST(GenerateTool, BrokenPipelineFoldersAreCleanErrors) {
  TF_REQUIRE_PROGRAM(kProgram);
  GenerateCase c("generate_folder");
  write_bytes(c.prompt, "a fox");
  const fs::path model = copy_tiny_pipeline(c.s / "pipeline");
  fs::remove_all(model / "scheduler");
  expect_clean_failure(c.run({}, model.string()), kProgram, {"scheduler/"}, {c.out});
  copy_tiny_pipeline(c.s / "pipeline");
  edit_json_file(model / "transformer" / "config.json", [](nlohmann::json& j) { j["text_dim"] = 48; });
  expect_clean_failure(c.run({}, model.string()), kProgram, {"text_dim", "hidden size 64"}, {c.out});
  copy_tiny_pipeline(c.s / "pipeline");
  edit_json_file(model / "vae" / "config.json", [](nlohmann::json& j) { j["latent_channels"] = 16; });
  expect_clean_failure(c.run({}, model.string()), kProgram, {"latent_channels", "64"}, {c.out});
  copy_tiny_pipeline(c.s / "pipeline");
  write_bytes(model / "model_index.json", "{\"_class_name\": ");
  expect_clean_failure(c.run({}, model.string()), kProgram, {"model_index.json"}, {c.out});
  copy_tiny_pipeline(c.s / "pipeline");
  write_bytes(model / "scheduler" / "scheduler_config.json", "{\"num_train_timesteps\": 500}");
  expect_clean_failure(c.run({}, model.string()), kProgram, {"num_train_timesteps"}, {c.out});
}
