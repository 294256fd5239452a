// PNG reading and writing: round trip, conversions to RGB 8-bit, and refusals naming the file.
#include <gtest/gtest.h>
#include <png.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/png.h"

namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tf-png-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// Writes a PNG of any colour type and depth with libpng (rows given as raw bytes).
void write_raw_png(const std::string& path, int w, int h, int color, int depth, const std::vector<uint8_t>& data) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_TRUE(f);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_IHDR(png, info, w, h, depth, color, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const size_t row = data.size() / h;
  for (int y = 0; y < h; ++y) png_write_row(png, const_cast<png_bytep>(data.data() + y * row));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
}

std::string error_of(const std::string& path) {
  try {
    tf::read_png_rgb8(path);
  } catch (const tf::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Png, RoundTripIsExact) {
  tf::RgbImage img;
  img.width = 5;
  img.height = 3;
  for (int i = 0; i < 45; ++i) img.rgb.push_back(static_cast<uint8_t>(i * 37 + 11));
  const std::string p = temp_path("rt.png");
  tf::write_png_rgb8(p, img);
  std::string conv = "unset";
  const tf::RgbImage back = tf::read_png_rgb8(p, &conv);
  EXPECT_EQ(back.width, 5);
  EXPECT_EQ(back.height, 3);
  EXPECT_EQ(back.rgb, img.rgb);
  EXPECT_EQ(conv, "");
  EXPECT_FALSE(fs::exists(p + ".tmp." + std::to_string(::getpid())));
}

TEST(Png, GreyIsReplicatedAndStated) {
  const std::string p = temp_path("grey.png");
  write_raw_png(p, 2, 1, PNG_COLOR_TYPE_GRAY, 8, {10, 200});
  std::string conv;
  const tf::RgbImage img = tf::read_png_rgb8(p, &conv);
  EXPECT_EQ(img.rgb, (std::vector<uint8_t>{10, 10, 10, 200, 200, 200}));
  EXPECT_NE(conv.find("grey"), std::string::npos);
}

TEST(Png, AlphaIsDroppedNotComposited) {
  const std::string p = temp_path("rgba.png");
  write_raw_png(p, 1, 1, PNG_COLOR_TYPE_RGB_ALPHA, 8, {100, 150, 200, 0});
  std::string conv;
  const tf::RgbImage img = tf::read_png_rgb8(p, &conv);
  EXPECT_EQ(img.rgb, (std::vector<uint8_t>{100, 150, 200}));
  EXPECT_NE(conv.find("alpha dropped"), std::string::npos);
}

TEST(Png, SixteenBitKeepsTheHighByte) {
  const std::string p = temp_path("rgb16.png");
  write_raw_png(p, 1, 1, PNG_COLOR_TYPE_RGB, 16, {0x12, 0xff, 0xab, 0x01, 0x00, 0x80});
  std::string conv;
  const tf::RgbImage img = tf::read_png_rgb8(p, &conv);
  EXPECT_EQ(img.rgb, (std::vector<uint8_t>{0x12, 0xab, 0x00}));
  EXPECT_NE(conv.find("16-bit"), std::string::npos);
}

TEST(Png, TruncatedFileIsAClearError) {
  tf::RgbImage img{8, 8, std::vector<uint8_t>(8 * 8 * 3, 77)};
  for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] = static_cast<uint8_t>(i * 7);
  const std::string p = temp_path("trunc.png");
  tf::write_png_rgb8(p, img);
  fs::resize_file(p, fs::file_size(p) - 30);
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("corrupt or truncated"), std::string::npos) << e;
}

TEST(Png, NotAPngIsAClearError) {
  const std::string p = temp_path("text.png");
  std::ofstream(p) << "hello, not a picture";
  EXPECT_NE(error_of(p).find("not a PNG"), std::string::npos);
  EXPECT_NE(error_of(temp_path("missing.png")).find("cannot open"), std::string::npos);
}

// A valid signature and IHDR claiming 100000 x 100000, then nothing: refused before allocating.
TEST(Png, AbsurdSizeIsRefusedFromTheHeader) {
  std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  auto be32 = [&](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
  };
  be32(100000);
  be32(100000);
  b.insert(b.end(), {8, 2, 0, 0, 0});
  const uLong crc = crc32(0, b.data() + 12, 17);
  be32(static_cast<uint32_t>(crc));
  const std::string p = temp_path("huge.png");
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("16384"), std::string::npos) << e;
}

TEST(Png, FailedWriteLeavesNothing) {
  tf::RgbImage img{2, 2, std::vector<uint8_t>(12, 1)};
  const std::string p = temp_path("no-such-dir/out.png");
  EXPECT_THROW(tf::write_png_rgb8(p, img), tf::Error);
  EXPECT_FALSE(fs::exists(p));
}

}  // namespace
