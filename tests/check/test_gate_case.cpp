// The gate's one case reader (check/gate/case.h) on small hand-made cases: what it checks when it
// opens a case, and typed tensors whose errors name the file, the tensor and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <unistd.h>

#include "check/gate/case.h"
#include "core/error.h"
#include "io/safetensors.h"

namespace {

namespace fs = std::filesystem;
using namespace tf::check::gate;

std::map<std::string, std::string> good_metadata() {
  return {{"kind", "tensorfold.case"}, {"component", "toy"}, {"steps", "[\"a\", \"b\"]"},
          {"reference", "{\"torch\": \"2.15.0\"}"}, {"size", "3"}};
}

std::string write_case(const std::string& name, const std::map<std::string, std::string>& meta) {
  const fs::path dir = fs::temp_directory_path() / ("tf-gate-case-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / (name + ".safetensors")).string();
  tf::Tensor ids = tf::zeros(tf::DType::I32, {4}), a = tf::zeros(tf::DType::F64, {2, 3}), b = tf::zeros(tf::DType::BF16, {2, 3});
  tf::write_safetensors(path, {{"in.ids", ids}, {"f32.a", a}, {"f32.b", a}, {"bf16.a", b}}, meta);
  return path;
}

void expect_error(const std::function<void()>& f, const std::vector<std::string>& names) {
  try {
    f();
    FAIL() << "no error";
  } catch (const tf::Error& e) {
    for (const std::string& n : names) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST(GateCase, OpensAGoodCase) {
  const std::string p = write_case("good", good_metadata());
  const Case c = Case::open(p, "toy");
  EXPECT_EQ(c.steps(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(c.has_step("b"));
  EXPECT_FALSE(c.has_step("c"));
  EXPECT_EQ(c.reference(), "torch 2.15.0");
  EXPECT_EQ(c.meta("size"), "3");
  EXPECT_EQ(c.input("ids", {{tf::DType::I32}, {-1}, "[n]", ""}).dim(0), 4);
  EXPECT_EQ(c.reference_output("a", {2, 3}, "").dtype, tf::DType::F64);
  EXPECT_TRUE(c.torch_bf16("a", {2, 3}, "").has_value());
  EXPECT_FALSE(c.torch_bf16("b", {2, 3}, "").has_value());  // optional: absent means rounding alone
}

TEST(GateCase, RefusesWrongKindComponentStepsOrReference) {
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> bad{
      {"kind", "idol-vae", {"\"kind\"", "idol-vae", "tensorfold.case"}},
      {"component", "flux2_vae", {"\"component\"", "flux2_vae", "\"toy\""}},
      {"steps", "[\"a\"", {"\"steps\"", "not valid JSON"}},
      {"steps", "[]", {"\"steps\"", "non-empty"}},
      {"steps", "[\"a\", 3]", {"\"steps\"", "3"}},
      {"steps", "[\"a\", \"a\"]", {"\"steps\"", "\"a\" twice"}},
      {"steps", "\"a,b\"", {"\"steps\"", "array"}},
      {"reference", "diffusers 0.42.1", {"\"reference\"", "not valid JSON"}},
      {"reference", "[\"torch\"]", {"\"reference\"", "JSON object"}},
      {"reference", "{\"torch\": 2}", {"\"reference\"", "\"torch\""}}};
  for (size_t i = 0; i < bad.size(); ++i) {
    auto meta = good_metadata();
    meta[std::get<0>(bad[i])] = std::get<1>(bad[i]);
    const std::string p = write_case("bad" + std::to_string(i), meta);
    auto names = std::get<2>(bad[i]);
    names.push_back(p);
    expect_error([&] { Case::open(p, "toy"); }, names);
  }
  for (const char* key : {"kind", "component", "steps", "reference"}) {
    auto meta = good_metadata();
    meta.erase(key);
    const std::string p = write_case(std::string("missing_") + key, meta);
    expect_error([&] { Case::open(p, "toy"); }, {p, std::string("\"") + key + "\""});
  }
}

TEST(GateCase, TypedTensorsNameFileTensorAndExpectation) {
  const std::string p = write_case("typed", good_metadata());
  const Case c = Case::open(p, "toy");
  expect_error([&] { c.input("noise", {{tf::DType::F32}, {2, 3}, "", "the latents"}); },
               {p, "\"in.noise\"", "expected F32 [2, 3] (the latents)"});
  expect_error([&] { c.reference_output("a", {3, 2}, "this model's a"); },
               {p, "\"f32.a\"", "F64 [2, 3]", "expected F32 or F64 [3, 2] (this model's a)"});
  expect_error([&] { c.torch_bf16("a", {2, 4}, ""); }, {p, "\"bf16.a\"", "expected BF16 [2, 4]"});
  expect_error([&] { c.input("ids", {{tf::DType::I64}, {-1}, "[n]", ""}); }, {p, "\"in.ids\"", "I32", "expected I64 [n]"});
  expect_error([&] { c.input("ids", {{tf::DType::I32}, {-1, -1}, "[n, m]", ""}); }, {"expected I32 [n, m]"});
  expect_error([&] { c.whole("picture", {{tf::DType::U8}, {-1, -1, 3}, "[H, W, 3]", ""}); },
               {p, "no tensor \"whole.picture\"", "expected U8 [H, W, 3]"});
  expect_error([&] { c.meta("prompts"); }, {p, "\"prompts\""});
  expect_error([&] { c.meta_json("size"), c.meta_json("kind"); }, {p, "\"kind\"", "not valid JSON"});
}

}  // namespace
