// Crash inputs found by fuzzing the JSON-based parsers, rebuilt here (too large to commit).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "tool_runner.h"

using namespace tf;

namespace {

std::string safetensors_bytes(const std::string& header) { return hostile::u64_le_bytes(header.size()) + header; }

std::string error_of_header(const std::string& header) {
  try {
    SafetensorsFile::parse(safetensors_bytes(header), "deep.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// fuzz_safetensors: a shape nested 200000 lists deep overflowed the stack in the error message's
// JSON dump (nlohmann's dump and copy recurse).
TEST(JsonRegressions, DeeplyNestedShapeIsAClearError) {
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  std::string err = error_of_header(R"({"x":{"dtype":"F32","shape":)" + deep + R"(,"data_offsets":[0,0]}})");
  EXPECT_NE(err.find("deep.safetensors"), std::string::npos) << err;
  EXPECT_NE(err.find("nested more than"), std::string::npos) << err;
}

TEST(JsonRegressions, NestingUpToTheLimitParses) {
  int d = kMaxJsonDepth;
  EXPECT_NO_THROW(parse_json(std::string(d, '[') + std::string(d, ']'), "ok.json"));
  EXPECT_THROW(parse_json(std::string(d + 1, '[') + std::string(d + 1, ']'), "deep.json"), Error);
  // brackets inside strings are text, not nesting
  std::string in_string = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  EXPECT_NO_THROW(parse_json(in_string, "strings.json"));
}

TEST(JsonRegressions, LongBadTokenGivesAShortLine) {
  std::string err;
  try {
    parse_json("{\"a\": \"" + std::string(1 << 20, 'x'), "long.json");
  } catch (const Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("long.json: not valid JSON"), std::string::npos) << err.substr(0, 300);
  EXPECT_LT(err.size(), 400u);
}

TEST(JsonRegressions, WrongTypeMessageIsBrief) {
  Json j = parse_json(R"({"hidden_size": ")" + std::string(5000, 'y') + R"("})", "config.json");
  std::string err;
  try {
    json_int(j, "hidden_size", "config.json");
  } catch (const Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("config.json: \"hidden_size\" must be an integer"), std::string::npos) << err;
  EXPECT_LT(err.size(), 200u);
}
