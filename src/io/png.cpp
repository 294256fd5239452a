#include "io/png.h"

#include <png.h>
#include <unistd.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace tf {

namespace {

struct ErrorSink {
  char message[256] = "";
};

void on_error(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<ErrorSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof sink->message, "%s", msg ? msg : "libpng error");
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

struct File {
  FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};

std::string color_name(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return "grey";
    case PNG_COLOR_TYPE_GRAY_ALPHA: return "grey+alpha";
    case PNG_COLOR_TYPE_PALETTE: return "palette";
    case PNG_COLOR_TYPE_RGB: return "RGB";
    case PNG_COLOR_TYPE_RGB_ALPHA: return "RGBA";
    default: return "colour type " + std::to_string(color_type);
  }
}

// Reads into `out`; returns false with sink.message set on a libpng error. No C++ object with a
// destructor is created between setjmp and the calls that may longjmp.
bool read_rows(FILE* f, const std::string& path, RgbImage& out, std::string& conversion, ErrorSink& sink,
               std::string& refusal) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &sink, on_error, on_warning);
  if (!png) fail(path + ": cannot start libpng");
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> rows;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return false;
  }
  png_set_user_limits(png, kMaxPngSide, kMaxPngSide);
  png_init_io(png, f);
  png_read_info(png, info);
  const png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  const int bit_depth = png_get_bit_depth(png, info), color = png_get_color_type(png, info);
  if (w == 0 || h == 0 || w > kMaxPngSide || h > kMaxPngSide) {
    refusal = std::to_string(w) + "x" + std::to_string(h);
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
  }
  if (color != PNG_COLOR_TYPE_RGB || bit_depth != 8)
    conversion = color_name(color) + " " + std::to_string(bit_depth) + "-bit -> RGB 8-bit" +
                 ((color & PNG_COLOR_MASK_ALPHA) ? " (alpha dropped)" : "") +
                 (bit_depth == 16 ? " (high byte of each 16-bit sample)" : "");
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<size_t>(w) * 3) png_error(png, "unexpected row size after conversion");
  out.width = w;
  out.height = h;
  out.rgb.resize(static_cast<size_t>(w) * h * 3);
  rows.resize(h);
  for (png_uint_32 y = 0; y < h; ++y) rows[y] = out.rgb.data() + static_cast<size_t>(y) * w * 3;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace

namespace {

// The size the IHDR chunk declares (it must come first), read before libpng: libpng's refusal of
// a side over the limit does not say the size.
bool declared_size(FILE* f, uint32_t& width, uint32_t& height) {
  unsigned char b[16];  // after the signature: length, "IHDR", width, height
  if (std::fread(b, 1, sizeof b, f) != sizeof b || std::memcmp(b + 4, "IHDR", 4) != 0) return false;
  auto be32 = [](const unsigned char* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; };
  width = be32(b + 8);
  height = be32(b + 12);
  return true;
}

RgbImage read_png(const std::string& path, std::string* conversion, bool header_only) {
  File file;
  file.f = std::fopen(path.c_str(), "rb");
  if (!file.f) fail(path + ": cannot open (" + std::strerror(errno) + ")");
  unsigned char sig[8];
  if (std::fread(sig, 1, 8, file.f) != 8 || png_sig_cmp(sig, 0, 8) != 0) fail(path + ": not a PNG file");
  uint32_t w = 0, h = 0;
  const bool declared = declared_size(file.f, w, h);
  if (declared && (w == 0 || h == 0 || w > kMaxPngSide || h > kMaxPngSide))
    fail(path + ": picture of " + std::to_string(w) + "x" + std::to_string(h) +
         " pixels refused: each side must be 1 to " + std::to_string(kMaxPngSide));
  RgbImage out;
  if (header_only) {
    if (!declared) fail(path + ": corrupt or truncated PNG (no IHDR chunk after the signature)");
    out.width = w;
    out.height = h;
    return out;
  }
  std::rewind(file.f);
  std::string conv, refusal;
  ErrorSink sink;
  if (!read_rows(file.f, path, out, conv, sink, refusal))
    fail(path + ": corrupt or truncated PNG (" + std::string(sink.message) + ")");
  if (!refusal.empty())
    fail(path + ": picture of " + refusal + " pixels refused: each side must be 1 to " + std::to_string(kMaxPngSide));
  if (conversion) *conversion = conv;
  return out;
}

}  // namespace

RgbImage read_png_rgb8(const std::string& path, std::string* conversion) { return read_png(path, conversion, false); }

PictureSize read_png_size(const std::string& path) {
  const RgbImage header = read_png(path, nullptr, true);
  return {header.width, header.height};
}

void write_png_rgb8(const std::string& path, const RgbImage& image) {
  require(image.width >= 1 && image.height >= 1 && image.width <= kMaxPngSide && image.height <= kMaxPngSide,
          path + ": cannot write a " + std::to_string(image.width) + "x" + std::to_string(image.height) + " picture");
  require(image.rgb.size() == static_cast<size_t>(image.width * image.height * 3),
          path + ": picture buffer does not hold width x height x 3 bytes");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path + ": cannot write (" + std::strerror(errno) + ")");
  ErrorSink sink;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  std::vector<png_bytep> rows(image.height);
  for (int64_t y = 0; y < image.height; ++y) rows[y] = const_cast<png_bytep>(image.rgb.data() + y * image.width * 3);
  volatile bool ok = png && info;
  if (ok && setjmp(png_jmpbuf(png))) {
    ok = false;
  } else if (ok) {
    png_init_io(png, f);
    png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8,
                 PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows.data());
    png_write_end(png, nullptr);
  }
  if (png) png_destroy_write_struct(&png, info ? &info : nullptr);
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    fail(path + ": writing the PNG failed" + (sink.message[0] ? std::string(" (") + sink.message + ")" : ""));
  }
}

}  // namespace tf
