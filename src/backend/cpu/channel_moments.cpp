#include "backend/norm/channel_moments.h"

#include "backend/cpu/vector_clones.h"
#include "core/parallel.h"

namespace tf::cpu {

namespace {

// (sum, sum of squares) of x[0, n) in fp64 over 8 fixed interleaved lanes, then the lanes in order.
TF_VECTOR_CLONES void moments_f64(const float* x, int64_t n, double* out) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ss[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const double d = static_cast<double>(x[i + l]);
      s[l] += d;
      ss[l] += d * d;
    }
  for (int l = 0; i < n; ++i, ++l) {
    const double d = static_cast<double>(x[i]);
    s[l] += d;
    ss[l] += d * d;
  }
  out[0] = out[1] = 0.0;
  for (int l = 0; l < 8; ++l) out[0] += s[l], out[1] += ss[l];
}

}  // namespace

void channel_moments(const Tensor& x, Tensor& m) {
  const int64_t c = x.dim(0), per_channel = c > 0 ? x.numel() / c : 0;
  const float* xp = x.ptr<const float>();
  double* mp = m.ptr<double>();
  parallel_for(c, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) moments_f64(xp + ch * per_channel, per_channel, mp + 2 * ch);
  });
}

}  // namespace tf::cpu
