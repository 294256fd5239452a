// tf-moss-image velocity on the committed tiny transformer: a forward writes the velocity, the same
// bytes on one thread and on all; damaged inputs are one clear line naming the flag, file or tensor,
// a non-zero exit and no output left behind.
#include <gtest/gtest.h>

#include <cstdlib>

#include "check/random_tensor.h"
#include "io/safetensors.h"
#include "tool_runner.h"

using namespace tf::hostile;

namespace {

constexpr const char* kProgram = "tf-moss-image";
const std::string kModel = std::string(TF_TEST_DATA) + "/moss-transformer-tiny";

struct VelocityCase {
  Scratch s;
  fs::path latents, rows, out;
  explicit VelocityCase(const std::string& name) : s(name) {
    latents = s / "latents.safetensors";
    rows = s / "rows.safetensors";
    out = s / "v.safetensors";
    tf::write_safetensors(latents.string(), {{"latents", tf::check::random_normal_tensor(tf::DType::F32, {1, 16, 4, 3}, 1, 1.0f)}});
    tf::write_safetensors(rows.string(), {{"prompt.rows", tf::check::random_normal_tensor(tf::DType::BF16, {5, 48}, 2, 1.0f)}});
  }
  RunResult run(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"velocity", "--model", kModel, "--latents", latents.string(), "--rows", rows.string(),
                                     "--out", out.string(), "--sigma", "0.6"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_program(kProgram, args);
  }
};

}  // namespace

TEST(VelocityTool, WritesTheVelocityWithTheSameBytesOnOneThreadOrMany) {
  TF_REQUIRE_PROGRAM(kProgram);
  VelocityCase c("velocity_ok");
  const RunResult many = c.run({"--skip-layer", "2"});
  ASSERT_EQ(many.exit_code, 0) << many.err;
  const tf::Tensor v = tf::SafetensorsFile::open(c.out.string())->get("velocity");
  EXPECT_EQ(v.dtype, tf::DType::F32);
  EXPECT_EQ(v.shape, (tf::Shape{16, 4, 3}));
  const std::string bytes = read_bytes(c.out);
  ::setenv("TF_THREADS", "1", 1);
  const RunResult one = c.run({"--skip-layer", "2"});
  ::unsetenv("TF_THREADS");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(read_bytes(c.out), bytes) << "the velocity's bytes depend on the thread count";
  ASSERT_EQ(c.run().exit_code, 0);
  EXPECT_NE(read_bytes(c.out), bytes) << "--skip-layer changed nothing";
}

TEST(VelocityTool, BadInputsAreCleanErrors) {
  TF_REQUIRE_PROGRAM(kProgram);
  VelocityCase c("velocity_bad");
  expect_clean_failure(c.run({"--sigma", "1.5"}), kProgram, {"--sigma"}, {c.out});
  expect_clean_failure(c.run({"--skip-layer", "4"}), kProgram, {"skip layer 4"}, {c.out});
  expect_clean_failure(c.run({"--max-memory", "0.001"}), kProgram, {"--latents", "GiB"}, {c.out});
  tf::write_safetensors(c.latents.string(), {{"latents", tf::check::random_normal_tensor(tf::DType::F32, {15, 4, 3}, 1, 1.0f)}});
  expect_clean_failure(c.run(), kProgram, {"latents", "[16, h, w]"}, {c.out});
  tf::write_safetensors(c.latents.string(), {{"noise", tf::check::random_normal_tensor(tf::DType::F32, {16, 4, 3}, 1, 1.0f)}});
  expect_clean_failure(c.run(), kProgram, {"--latents", "\"latents\""}, {c.out});
  write_bytes(c.latents, "not a safetensors file");
  expect_clean_failure(c.run(), kProgram, {c.latents.string()}, {c.out});
  VelocityCase d("velocity_bad_rows");
  tf::write_safetensors(d.rows.string(), {{"prompt.rows", tf::check::random_normal_tensor(tf::DType::BF16, {5, 47}, 2, 1.0f)}});
  expect_clean_failure(d.run(), kProgram, {"prompt rows", "[L, 48]"}, {d.out});
  expect_clean_failure(run_program(kProgram, {"velocity", "--model", "/nonexistent/model", "--latents", d.latents.string(),
                                              "--rows", d.rows.string(), "--out", d.out.string()}),
                       kProgram, {"/nonexistent/model"}, {d.out});
}
