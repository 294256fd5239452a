#include "backend/conv/upsample_nearest2x.h"

#include "core/parallel.h"

namespace tf::cpu {

void upsample_nearest2x(const Tensor& x, Tensor& y) {
  const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
  const float* xp = x.ptr<const float>();
  float* yp = y.ptr<float>();
  parallel_for(c * h, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {  // row = channel * h + i
      const float* in = xp + row * w;
      float* out0 = yp + row * 2 * (2 * w);  // output rows 2i and 2i + 1 of the same channel
      float* out1 = out0 + 2 * w;
      for (int64_t j = 0; j < w; ++j) {
        out0[2 * j] = in[j];
        out0[2 * j + 1] = in[j];
      }
      for (int64_t j = 0; j < 2 * w; ++j) out1[j] = out0[j];
    }
  }, 16);
}

}  // namespace tf::cpu
