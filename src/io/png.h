#pragma once
// PNG pictures as 8-bit RGB (libpng). Reading converts what PIL's convert("RGB") converts: grey is
// replicated, palettes expanded, alpha dropped (not composited), 16-bit samples keep their high
// byte; the conversion is reported so tools can state it. Writing is atomic (temporary + rename).
#include <cstdint>
#include <string>
#include <vector>

namespace tf {

struct RgbImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // [height, width, 3] row-major
};

// The largest side accepted; larger headers are refused before any pixel memory is allocated.
constexpr int64_t kMaxPngSide = 16384;

// Errors (missing, corrupt or truncated file, absurd size) name the file.
// `conversion` (optional) receives "" for 8-bit RGB, else what was converted, e.g. "RGBA -> RGB (alpha dropped)".
RgbImage read_png_rgb8(const std::string& path, std::string* conversion = nullptr);

struct PictureSize {
  int64_t width = 0, height = 0;
};

// The size the picture's IHDR declares (no pixels read, nothing past the IHDR checked), with
// read_png_rgb8's size refusals, so a run can be sized before any pixel memory is allocated.
PictureSize read_png_size(const std::string& path);

void write_png_rgb8(const std::string& path, const RgbImage& image);

}  // namespace tf
