#include "families/flux2_vae/pixels.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/parallel.h"

namespace tf::flux2_vae {

Tensor picture_to_input(const RgbImage& img, int64_t multiple, const std::string& what) {
  require(img.width % multiple == 0 && img.height % multiple == 0 && img.width > 0 && img.height > 0,
          what + ": picture is " + std::to_string(img.width) + "x" + std::to_string(img.height) +
              "; width and height must be multiples of " + std::to_string(multiple) +
              " (the VAE's downscale times its 2x2 patches)");
  const int64_t h = img.height, w = img.width;
  Tensor x = empty(DType::F32, {3, h, w});
  float* xp = x.ptr<float>();
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < h * w; ++i) {
      const float unit = static_cast<float>(img.rgb[i * 3 + c]) / 255.0f;
      xp[c * h * w + i] = 2.0f * unit - 1.0f;
    }
  return x;
}

RgbImage output_to_picture(const Tensor& x) {
  require(x.dtype == DType::F32 && x.rank() == 3 && x.dim(0) == 3 && x.device == Device::CPU,
          "decoded picture is " + x.describe() + ", expected F32 [3, H, W] on the CPU");
  RgbImage img;
  img.height = x.dim(1);
  img.width = x.dim(2);
  const int64_t hw = img.height * img.width;
  img.rgb.resize(hw * 3);
  const float* xp = x.ptr<const float>();
  uint8_t* rgb = img.rgb.data();
  parallel_for(hw, [&](int64_t b, int64_t e) {  // each pixel alone: the bytes do not depend on the split
    for (int64_t i = b; i < e; ++i)
      for (int64_t c = 0; c < 3; ++c) {
        const float half = xp[c * hw + i] * 0.5f;
        float u = half + 0.5f;
        u = std::isnan(u) ? 0.0f : std::clamp(u, 0.0f, 1.0f);  // NaN: torch's clamp keeps it; numpy casts to 0
        rgb[i * 3 + c] = static_cast<uint8_t>(std::nearbyint(u * 255.0f));
      }
  }, 1 << 14);
  return img;
}

}  // namespace tf::flux2_vae
