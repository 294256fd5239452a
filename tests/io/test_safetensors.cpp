#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

using namespace tf;
namespace fs = std::filesystem;

namespace {

fs::path tmpdir() {
  fs::path p = fs::temp_directory_path() / ("tf_io_" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

// A file with a hand-written header and `data_bytes` bytes of data.
std::string raw_file(const std::string& name, const std::string& header, size_t data_bytes,
                     uint64_t declared_len = UINT64_MAX) {
  std::string path = (tmpdir() / name).string();
  std::ofstream f(path, std::ios::binary);
  uint64_t n = declared_len == UINT64_MAX ? header.size() : declared_len;
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(n >> (8 * i)));
  f << header << std::string(data_bytes, '\x01');
  return path;
}

std::string error_of(const std::string& path) {
  try {
    SafetensorsFile::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Safetensors, RoundTrip) {
  Tensor a = empty(DType::BF16, {2, 3});
  Tensor b = empty(DType::I32, {4});
  for (int i = 0; i < 6; ++i) a.ptr<uint16_t>()[i] = static_cast<uint16_t>(i * 1000);
  for (int i = 0; i < 4; ++i) b.ptr<int32_t>()[i] = -i;
  std::string path = (tmpdir() / "rt.safetensors").string();
  write_safetensors(path, {{"a", a}, {"b", b}}, {{"k", "v"}});
  auto f = SafetensorsFile::open(path);
  EXPECT_EQ(f->metadata().at("k"), "v");
  Tensor a2 = f->get("a");
  EXPECT_EQ(a2.shape, (Shape{2, 3}));
  EXPECT_EQ(a2.ptr<uint16_t>()[5], 5000);
  EXPECT_EQ(f->get("b").ptr<int32_t>()[3], -3);
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST(Safetensors, BadInputsNameTheProblem) {
  struct Case { const char* name; std::string header; size_t data; uint64_t len; const char* expect; };
  std::vector<Case> cases = {
      {"empty_header", "", 0, 0, "not valid JSON"},
      {"len_past_end", "{}", 0, 1000, "runs past the end"},
      {"len_huge", "{}", 0, uint64_t(1) << 63, "exceeds"},
      {"not_json", "{not json", 0, UINT64_MAX, "not valid JSON"},
      {"not_object", "[1,2]", 0, UINT64_MAX, "must be a JSON object"},
      {"unknown_dtype", R"({"x":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}})", 1, UINT64_MAX, "unknown dtype"},
      {"reversed", R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})", 1, UINT64_MAX, "reversed"},
      {"past_end", R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8, UINT64_MAX, "past the data area"},
      {"size_mismatch", R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8, UINT64_MAX, "needs 12 bytes"},
      {"overlap", R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12, UINT64_MAX, "overlap"},
      {"negative_dim", R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0, UINT64_MAX, "non-negative"},
      {"absurd_shape", R"({"x":{"dtype":"F32","shape":[100000000000000000],"data_offsets":[0,0]}})", 0, UINT64_MAX, "absurdly large"},
      {"bad_offsets", R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4, UINT64_MAX, "data_offsets"},
      {"bad_metadata", R"({"__metadata__":{"a":1}})", 0, UINT64_MAX, "__metadata__"},
  };
  for (auto& c : cases) {
    std::string path = raw_file(std::string(c.name) + ".safetensors", c.header, c.data, c.len);
    std::string err = error_of(path);
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.name << ": " << err;
    EXPECT_NE(err.find(path), std::string::npos) << c.name << " error must name the file: " << err;
  }
}

TEST(Safetensors, TruncatedBelowTheLengthField) {
  std::string path = (tmpdir() / "tiny.safetensors").string();
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_NE(error_of(path).find("too short"), std::string::npos) << error_of(path);
}

TEST(Safetensors, MissingFileIsAClearError) {
  std::string err = error_of("/nonexistent/model.safetensors");
  EXPECT_NE(err.find("/nonexistent/model.safetensors"), std::string::npos) << err;
}

TEST(Checkpoint, ShardsAndIndex) {
  fs::path d = tmpdir() / "sharded";
  fs::create_directories(d);
  Tensor a = zeros(DType::F32, {2});
  Tensor b = zeros(DType::BF16, {3, 2});
  write_safetensors((d / "s1.safetensors").string(), {{"a", a}});
  write_safetensors((d / "s2.safetensors").string(), {{"b", b}});
  std::ofstream(d / "model.safetensors.index.json") << R"({"metadata":{},"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})";
  Checkpoint c = Checkpoint::open_folder(d.string());
  EXPECT_EQ(c.get("b", DType::BF16, {3, 2}).shape, (Shape{3, 2}));
  try {
    c.get("b", DType::BF16, {2, 3});
    FAIL() << "mis-shaped tensor accepted";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("s2.safetensors"), std::string::npos) << m;
    EXPECT_NE(m.find("\"b\""), std::string::npos) << m;
    EXPECT_NE(m.find("expected BF16 [2, 3]"), std::string::npos) << m;
  }
  EXPECT_THROW(c.get("zzz"), Error);
  std::ofstream(d / "model.safetensors.index.json") << R"({"weight_map":{"a":"s1.safetensors","c":"s3.safetensors"}})";
  try {
    Checkpoint::open_folder(d.string());
    FAIL() << "absent shard accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("s3.safetensors"), std::string::npos) << e.what();
  }
  std::ofstream(d / "model.safetensors.index.json") << R"({"weight_map":)";
  EXPECT_THROW(Checkpoint::open_folder(d.string()), Error);
}
