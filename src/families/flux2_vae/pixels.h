#pragma once
// Pictures to and from the VAE's value range, as diffusers' VaeImageProcessor does it in fp32:
// in x = 2 * (p / 255) - 1; out p = round_half_even(clamp(x * 0.5 + 0.5, 0, 1) * 255).
#include "core/tensor.h"
#include "io/png.h"

namespace tf::flux2_vae {

// RGB 8-bit [H, W, 3] -> F32 [3, H, W] (CPU). `multiple`: both sides must be multiples of it
// (16 for FLUX.2), else an error stating the rule; `what` names the picture in errors.
Tensor picture_to_input(const RgbImage& img, int64_t multiple, const std::string& what);

// F32 [3, H, W] (CPU) -> RGB 8-bit.
RgbImage output_to_picture(const Tensor& x);

}  // namespace tf::flux2_vae
