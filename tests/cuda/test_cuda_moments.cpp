// Per-channel moments on CUDA: written by every convolution kernel (the TMA kernels' store warps, or a pass
// after the others), against long double sums of the stored outputs; GroupNorm from them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/channel_moments.h"
#include "backend/norm/group_norm.h"
#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

namespace tf {
namespace {

using check::random_normal_tensor;

bool same_bytes(const Tensor& a, const Tensor& b) {
  const Tensor ha = to_device(a, Device::CPU), hb = to_device(b, Device::CPU);
  return ha.nbytes() == hb.nbytes() && std::memcmp(ha.data, hb.data, ha.nbytes()) == 0;
}

// The worst |m - sum| over the channels, each relative to its bound; above 1 is outside. The bound: the
// store warps' fp32 sums of deviations from a tile row's first value x0 (chains of 32 values, then 2 adds,
// the deviation rounded once: 40 eps of the sum of |x - x0| and of (x - x0)^2, with |x - x0| at most
// |x - mean| + max |x - mean|), and 1e-12 of sum |y| and sum y^2 for the double sums. `drop_last` leaves each
// channel's last value out of the reference (the control: one value missed must be far outside; the cases'
// channel means sit far from zero, so a missed value is far above the deviations' rounding).
double worst_moment_error(const Tensor& y, const Tensor& m, bool drop_last = false) {
  const Tensor hy = to_device(y, Device::CPU), hm = to_device(m, Device::CPU);
  const int64_t C = hy.dim(0), n = hy.numel() / C;
  const double eps40 = 40.0 * std::ldexp(1.0, -24);
  double worst = 0.0;
  for (int64_t c = 0; c < C; ++c) {
    const float* yc = hy.ptr<float>() + c * n;
    long double s = 0, ss = 0, a = 0, mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += yc[i];
    mean /= n;
    long double maxdev = 0, dev = 0, dev2 = 0;
    for (int64_t i = 0; i < n; ++i) maxdev = std::max(maxdev, std::fabs(yc[i] - mean));
    for (int64_t i = 0; i < n; ++i) {
      const long double d = std::fabs(yc[i] - mean) + maxdev;
      dev += d, dev2 += d * d;
    }
    for (int64_t i = 0; i < n - (drop_last ? 1 : 0); ++i) {
      const long double v = yc[i];
      s += v, ss += v * v, a += std::fabs(v);
    }
    const double bound_s = 1e-12 * double(a) + eps40 * double(dev) + 1e-300;
    const double bound_ss = 1e-12 * double(ss) + eps40 * double(dev2) + 1e-300;
    worst = std::max(worst, std::fabs(hm.ptr<double>()[2 * c] - double(s)) / bound_s);
    worst = std::max(worst, std::fabs(hm.ptr<double>()[2 * c + 1] - double(ss)) / bound_ss);
  }
  return worst;
}

struct Case {
  int64_t Ci, Co, H, W;
  int ks, stride;
  bool up, residual;
  const char* kernel;  // what it exercises, for the failure message
};

// Each convolution kernel's moments, with the store warps (epilogue) and as a pass: within 1e-12 of the
// long double sums of the bytes it stored, those bytes the same as without moments, the same moments on a
// second run; the control (one value left out of the reference) outside.
TEST(CudaMoments, EveryConvolutionKernelWritesItsOutputsMoments) {
  TF_REQUIRE_CUDA_GPU();
  const Case cases[] = {
      {128, 256, 24, 40, 3, 1, false, true, "row tiles, two channel tiles, partial position tiles"},
      {256, 128, 33, 45, 3, 2, false, true, "row tiles, stride 2"},
      {128, 64, 23, 19, 1, 1, false, true, "row tiles, 1x1, a partial channel tile"},
      {96, 96, 40, 36, 3, 1, false, true, "96-output column tiles, a 32-deep last channel tile"},
      {192, 96, 33, 45, 3, 1, false, true, "96-output column tiles, three channel tiles"},
      {64, 96, 17, 30, 3, 1, false, true, "96-output column tiles, one channel tile"},
      {96, 96, 6, 256, 3, 1, false, true, "96-output halo tiles"},
      {192, 192, 17, 30, 3, 1, false, true, "192-output column tiles (a pass)"},
      {64, 256, 12, 16, 3, 1, true, true, "sub-pixel classes on the row tiles"},
      {128, 192, 9, 40, 3, 1, true, true, "sub-pixel classes on the 192-output column tiles (a pass)"},
      {128, 96, 9, 40, 3, 1, true, true, "the upsampled picture on the 96-output column tiles"},
      {96, 3, 20, 30, 3, 1, false, true, "few outputs (a pass)"},
      {32, 64, 10, 12, 3, 1, false, true, "the gathering kernel (a pass)"},
  };
  uint32_t seed = 300;
  for (const Case& c : cases) {
    const int pad = c.ks == 3 ? 1 : 0;
    const Conv2dGeometry g = c.stride == 2 ? Conv2dGeometry{2, 0, 0, 1, 1} : Conv2dGeometry{1, pad, pad, pad, pad};
    const int64_t H = c.up ? 2 * c.H : c.H, W = c.up ? 2 * c.W : c.W;
    const int64_t Ho = conv2d_out_extent(H, c.ks, g.stride, g.pad_top, g.pad_bottom);
    const int64_t Wo = conv2d_out_extent(W, c.ks, g.stride, g.pad_left, g.pad_right);
    const Tensor x = to_device(random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, seed), Device::CUDA);
    const Tensor w = to_device(random_normal_tensor(DType::BF16, {c.Co, c.Ci, c.ks, c.ks}, seed + 1, 0.05f), Device::CUDA);
    const Tensor b = to_device(random_normal_tensor(DType::BF16, {c.Co}, seed + 2), Device::CUDA);
    Tensor hr = random_normal_tensor(DType::F32, {c.Co, Ho, Wo}, seed + 3);
    for (int64_t i = 0; i < hr.numel(); ++i) hr.ptr<float>()[i] += 1000.0f;  // means far above the spread
    const Tensor r = to_device(hr, Device::CUDA);
    seed += 4;
    auto run = [&](Tensor* m) {
      Tensor y = empty(DType::F32, {c.Co, Ho, Wo}, Device::CUDA);
      if (c.up)
        upsample_nearest2x_conv2d(x, w, b, g, y, c.residual ? &r : nullptr, m);
      else
        conv2d(x, w, b, g, y, c.residual ? &r : nullptr, m);
      return y;
    };
    const Tensor plain = run(nullptr);
    for (const char* how : {"epilogue", "moments_pass"}) {
      variants::Override v(Variant::group_norm_stats, how);
      Tensor m = empty(DType::F64, {c.Co, 2}, Device::CUDA), again = empty(DType::F64, {c.Co, 2}, Device::CUDA);
      const Tensor y = run(&m);
      run(&again);
      const std::string what = std::string(c.kernel) + ", " + how;
      EXPECT_TRUE(same_bytes(y, plain)) << what << ": the outputs changed";
      EXPECT_TRUE(same_bytes(m, again)) << what << ": other moments on a second run";
      EXPECT_LE(worst_moment_error(y, m), 1.0) << what;
      EXPECT_GT(worst_moment_error(y, m, true), 100.0) << what << ": the control (one value left out) passes";
      // GroupNorm from them: within fp32 of the statistics pass's
      Tensor from_pass = empty(DType::F32, y.shape, Device::CUDA), from_m = empty(DType::F32, y.shape, Device::CUDA);
      const Tensor gamma = to_device(random_normal_tensor(DType::BF16, {c.Co}, seed), Device::CUDA);
      const int groups = c.Co % 32 == 0 ? 32 : 1;
      group_norm(y, gamma, b, groups, 1e-6f, false, from_pass);
      group_norm(y, gamma, b, groups, 1e-6f, false, from_m, &m);
      const Tensor ha = to_device(from_pass, Device::CPU), hb = to_device(from_m, Device::CPU);
      double worst = 0.0;
      for (int64_t i = 0; i < ha.numel(); ++i)
        worst = std::max(worst, std::fabs(double(ha.ptr<float>()[i]) - hb.ptr<float>()[i]) /
                                    (std::fabs(double(ha.ptr<float>()[i])) + 1.0));
      EXPECT_LE(worst, 4e-6) << what << ": GroupNorm from the moments";
    }
  }
}

// channel_moments on both backends: within the bound of each other's sums.
TEST(CudaMoments, ChannelMomentsAgreeWithTheCpus) {
  TF_REQUIRE_CUDA_GPU();
  for (const Shape& s : {Shape{3, 1000, 999}, Shape{384, 64, 64}, Shape{7, 5}}) {
    const Tensor x = random_normal_tensor(DType::F32, s, 77, 2.0f);
    Tensor cpu = empty(DType::F64, {s[0], 2}), gpu = empty(DType::F64, {s[0], 2}, Device::CUDA);
    channel_moments(x, cpu);
    channel_moments(to_device(x, Device::CUDA), gpu);
    EXPECT_LE(worst_moment_error(x, gpu), 1.0) << shape_str(s);
    EXPECT_LE(worst_moment_error(x, cpu), 1.0) << shape_str(s);
  }
}

// GroupNorm with its statistics from the moments: within fp32 of the statistics pass's (a mean far from
// zero), and folded into the convolution the bytes of the two ops.
TEST(CudaMoments, GroupNormFromMomentsMatchesTheStatisticsPass) {
  TF_REQUIRE_CUDA_GPU();
  const int64_t C = 96, H = 33, W = 40, Co = 96;
  Tensor hx = random_normal_tensor(DType::F32, {C, H, W}, 91, 2.0f);
  for (int64_t i = 0; i < hx.numel(); ++i) hx.ptr<float>()[i] += 30.0f;
  const Tensor x = to_device(hx, Device::CUDA);
  const Tensor g = to_device(random_normal_tensor(DType::BF16, {C}, 92), Device::CUDA);
  const Tensor beta = to_device(random_normal_tensor(DType::BF16, {C}, 93), Device::CUDA);
  const Tensor w = to_device(random_normal_tensor(DType::BF16, {Co, C, 3, 3}, 94, 0.05f), Device::CUDA);
  const Tensor bias = to_device(random_normal_tensor(DType::BF16, {Co}, 95), Device::CUDA);
  Tensor m = empty(DType::F64, {C, 2}, Device::CUDA);
  channel_moments(x, m);
  Tensor from_pass = empty(DType::F32, x.shape, Device::CUDA), from_moments = empty(DType::F32, x.shape, Device::CUDA);
  group_norm(x, g, beta, 32, 1e-6f, true, from_pass);
  group_norm(x, g, beta, 32, 1e-6f, true, from_moments, &m);
  const Tensor a = to_device(from_pass, Device::CPU), b = to_device(from_moments, Device::CPU);
  double worst = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::fabs(double(a.ptr<float>()[i]) - b.ptr<float>()[i]) / (std::fabs(a.ptr<float>()[i]) + 1.0));
  EXPECT_LE(worst, 1e-6);
  Tensor want = empty(DType::F32, {Co, H, W}, Device::CUDA), got = empty(DType::F32, {Co, H, W}, Device::CUDA);
  conv2d(from_moments, w, bias, {}, want);
  group_norm_conv2d(x, g, beta, 32, 1e-6f, true, w, bias, {}, got, nullptr, &m);
  EXPECT_TRUE(same_bytes(got, want));
}

}  // namespace
}  // namespace tf
