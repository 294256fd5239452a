#pragma once
// A nearest 2x upsample followed by a 3x3 convolution (padding 1) as four sub-pixel classes: output
// (2i + a, 2j + b) reads rows i - 1 + a .. i + a and columns j - 1 + b .. j + b of the picture itself, each
// of the 2x2 taps weighted by the sum of the 3x3 weights that land on that input (1, 2 or 4 of them): 4/9
// of the taps. A summed weight is kept as bf16 hi + lo (about 16 bits, as the split inputs), so each class
// is 4 two-product taps (hi and lo inputs against the hi weights) and 3 one-product ones (the hi input
// against the lo weights; the tap of a single weight has none): 11 products where the upsampled picture
// takes 18.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace tf::cuda {

// w [M, C, 3, 3] -> out [M, 4 classes, 7 taps, Cp] (Cp = C rounded up to 64, the padding zero): taps 0-3
// the hi parts of 2x2 tap (u, v) = (t / 2, t % 2), taps 4-6 the lo parts of taps lo_tap(class, 0..2)
// (conv_tiles.cuh); each summed weight one fp32 sum, rows then columns in order.
void launch_subpixel_weights(const __nv_bfloat16* w, int M, int C, __nv_bfloat16* out, cudaStream_t stream);

}  // namespace tf::cuda
