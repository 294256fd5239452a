// PNG decoding (libpng through io/png): a clear error, or an RGB picture whose pixel count matches
// its sides, which the VAE's input conversion accepts or refuses by size.
#include <fstream>

#include "families/flux2_vae/pixels.h"
#include "fuzz_target.h"
#include "io/png.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = tf::fuzz::scratch_dir() + "/fuzz.png";
  tf::fuzz::write_file(path, data, size);
  try {
    tf::RgbImage img = tf::read_png_rgb8(path);
    if (img.width < 1 || img.height < 1 || img.width > tf::kMaxPngSide || img.height > tf::kMaxPngSide ||
        img.rgb.size() != static_cast<size_t>(img.width * img.height * 3))
      __builtin_trap();
    tf::Tensor x = tf::flux2_vae::picture_to_input(img, 16, path);
    tf::fuzz::touch(x.data, x.nbytes());
  } catch (const tf::Error&) {
  }
  return 0;
}
