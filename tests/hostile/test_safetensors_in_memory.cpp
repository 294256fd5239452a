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

// The format promises no alignment: a header of odd length puts every tensor at an odd address of
// the mapping. get() must hand back an aligned tensor (a view would be read with misaligned loads,
// which UBSan reports) with the same values.
TEST(SafetensorsInMemory, MisalignedTensorsComeBackAligned) {
  Tensor a = zeros(DType::F32, {3});
  a.ptr<float>()[1] = -2.25f;
  Tensor d = zeros(DType::F64, {2});
  d.ptr<double>()[1] = 1e300;
  for (size_t pad = 0; pad < 8; ++pad) {
    const std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                               "\"d\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[12,28]}}" +
                               std::string(pad, ' ');
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(uint64_t(header.size()) >> (8 * i));
    bytes += header;
    bytes.append(static_cast<const char*>(a.data), 12);
    bytes.append(static_cast<const char*>(d.data), 16);
    auto m = SafetensorsFile::parse(bytes, "odd");
    const Tensor ga = m->get("a"), gd = m->get("d");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ga.data) % alignof(float), 0u) << "pad " << pad;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(gd.data) % alignof(double), 0u) << "pad " << pad;
    EXPECT_EQ(ga.ptr<const float>()[1], -2.25f);
    EXPECT_EQ(gd.ptr<const double>()[1], 1e300);
  }
}
