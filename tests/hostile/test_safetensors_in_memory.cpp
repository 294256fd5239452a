// SafetensorsFile::parse (the fuzzers' entry) validates exactly as open() does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "io/safetensors.h"

using namespace tf;

TEST(SafetensorsInMemory, SameEntriesAsTheFile) {
  auto dir = std::filesystem::temp_directory_path() / ("tf_hostile_mem_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "m.safetensors").string();
  Tensor a = zeros(DType::F32, {2, 3});
  a.ptr<float>()[5] = 7.5f;
  write_safetensors(path, {{"a", a}, {"b", zeros(DType::BF16, {4})}});
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto m = SafetensorsFile::parse(bytes, "mem");
  EXPECT_EQ(m->path(), "mem");
  ASSERT_EQ(m->entries().size(), 2u);
  Tensor got = m->get("a");
  EXPECT_EQ(got.shape, (Shape{2, 3}));
  EXPECT_EQ(got.ptr<float>()[5], 7.5f);
  std::string err;
  try {
    SafetensorsFile::parse(bytes.substr(0, bytes.size() - 1), "cut");
  } catch (const Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("cut: tensor \"b\": data_offsets end"), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}
