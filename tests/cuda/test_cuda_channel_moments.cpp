// Channel moments on CUDA: the convolutions' epilogue sums (TF_CONV_MOMENTS=epilogue) and the pass over the
// output agree with the CPU's to fp64 rounding on every kernel path, leave y's bytes as they were, repeat
// their bytes; a GroupNorm from moments gives the CPU's bytes from the same moments.
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

struct Case {
  int64_t Ci, Co, H, W;
  int ks, stride;
  bool up, residual;
  const char* what;
};

struct ConvRun {
  Tensor y, m;  // on the CPU
};

// The convolution on CUDA with its moments asked (or not), as TF_CONV_MOMENTS and TF_CONV_SUBPIXEL_192 say.
ConvRun run_conv(const Case& c, uint32_t seed, bool moments, const char* how, const char* sub192) {
  variants::Override mo(Variant::conv_moments, how);
  variants::Override s192(Variant::conv_subpixel_192, sub192);
  const int pad = c.ks == 3 ? 1 : 0;
  const Conv2dGeometry g{c.stride, c.stride == 2 ? 0 : pad, c.stride == 2 ? 0 : pad, pad, pad};
  const int64_t H = c.up ? 2 * c.H : c.H, W = c.up ? 2 * c.W : c.W;
  const int64_t Ho = conv2d_out_extent(H, c.ks, g.stride, g.pad_top, g.pad_bottom);
  const int64_t Wo = conv2d_out_extent(W, c.ks, g.stride, g.pad_left, g.pad_right);
  Tensor x = random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, seed, 1.5f);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 0.5f;
  const Tensor w = random_normal_tensor(DType::BF16, {c.Co, c.Ci, c.ks, c.ks}, seed + 1, 0.05f);
  const Tensor b = random_normal_tensor(DType::BF16, {c.Co}, seed + 2, 1.0f);
  const Tensor r = random_normal_tensor(DType::F32, {c.Co, Ho, Wo}, seed + 3);
  const Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA), db = to_device(b, Device::CUDA);
  const Tensor dr = to_device(r, Device::CUDA);
  Tensor y = empty(DType::F32, {c.Co, Ho, Wo}, Device::CUDA), m = empty(DType::F64, {c.Co, 2}, Device::CUDA);
  if (c.up) upsample_nearest2x_conv2d(dx, dw, db, g, y, c.residual ? &dr : nullptr, moments ? &m : nullptr);
  else conv2d(dx, dw, db, g, y, c.residual ? &dr : nullptr, moments ? &m : nullptr);
  return {to_device(y, Device::CPU), moments ? to_device(m, Device::CPU) : Tensor{}};
}

Tensor cpu_moments(const Tensor& y) {
  Tensor m = empty(DType::F64, {y.dim(0), 2});
  channel_moments(y, m);
  return m;
}

// a's sums within fp64 rounding of b's: |a - b| <= 1e-12 of the channel's sum of squares.
void expect_moments_near(const Tensor& a, const Tensor& b, const std::string& what) {
  for (int64_t c = 0; c < a.dim(0); ++c) {
    const double q = b.ptr<double>()[2 * c + 1], tol = 1e-12 * q + 1e-300;
    EXPECT_NEAR(a.ptr<double>()[2 * c], b.ptr<double>()[2 * c], tol) << what << " channel " << c << " sum";
    EXPECT_NEAR(a.ptr<double>()[2 * c + 1], q, tol) << what << " channel " << c << " sum of squares";
  }
}

TEST(CudaChannelMoments, ConvolutionsGiveTheirOutputsMomentsOnEveryPath) {
  TF_REQUIRE_CUDA_GPU();
  const Case cases[] = {
      {96, 96, 6, 256, 3, 1, false, true, "halo, residual staged"},
      {64, 96, 5, 250, 3, 1, false, false, "halo, partial rows"},
      {192, 192, 4, 256, 3, 1, false, true, "halo halves, residual"},
      {128, 128, 40, 36, 3, 1, false, true, "row tiles, partial tiles"},
      {128, 384, 9, 20, 3, 1, false, false, "row tiles, three channel tiles"},
      {96, 96, 33, 45, 3, 2, false, true, "96-output columns, stride 2"},
      {384, 192, 23, 19, 1, 1, false, true, "192-output columns (a pass)"},
      {192, 192, 6, 64, 3, 1, true, false, "sub-pixel 192"},
      {192, 192, 3, 37, 3, 1, true, true, "sub-pixel 192, residual, partial"},
      {128, 256, 6, 20, 3, 1, true, false, "sub-pixel row tiles"},
      {96, 3, 37, 70, 3, 1, false, false, "few outputs (a pass)"},
      {32, 96, 20, 20, 3, 1, false, false, "gathered (a pass)"},
  };
  uint32_t seed = 101;
  for (const Case& c : cases) {
    for (const char* sub192 : {"columns", "halves"}) {
      if (!c.up && std::string(sub192) == "halves") continue;
      const std::string what = std::string(c.what) + " (" + sub192 + ")";
      const ConvRun plain = run_conv(c, seed, false, "epilogue", sub192);
      const Tensor want = cpu_moments(plain.y);
      for (const char* how : {"epilogue", "pass"}) {
        const ConvRun a = run_conv(c, seed, true, how, sub192), again = run_conv(c, seed, true, how, sub192);
        EXPECT_EQ(std::memcmp(a.y.data, plain.y.data, plain.y.nbytes()), 0) << what << " " << how << ": y changed";
        EXPECT_EQ(std::memcmp(a.m.data, again.m.data, a.m.nbytes()), 0) << what << " " << how << ": repeat";
        expect_moments_near(a.m, want, what + " " + how);
      }
    }
    seed += 4;
  }
}

// The statistics from moments are the CPU's to the byte (the same fp64 operations), so the normalised picture
// is too (no SiLU: its exp may differ by an ulp), and the folded convolution gives the stored norm's bytes.
TEST(CudaChannelMoments, GroupNormFromMomentsGivesTheCpusBytes) {
  TF_REQUIRE_CUDA_GPU();
  Tensor x = random_normal_tensor(DType::F32, {96, 24, 40}, 201, 2.0f);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 3.0f;
  const Tensor g = random_normal_tensor(DType::BF16, {96}, 202), b = random_normal_tensor(DType::BF16, {96}, 203);
  const Tensor m = cpu_moments(x);
  Tensor want = empty(DType::F32, x.shape);
  group_norm(x, g, b, 32, 1e-6f, false, want, &m);
  const Tensor dx = to_device(x, Device::CUDA), dg = to_device(g, Device::CUDA), db = to_device(b, Device::CUDA);
  const Tensor dm = to_device(m, Device::CUDA);
  Tensor dy = empty(DType::F32, x.shape, Device::CUDA);
  group_norm(dx, dg, db, 32, 1e-6f, false, dy, &dm);
  const Tensor got = to_device(dy, Device::CPU);
  EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0);

  const Tensor w = random_normal_tensor(DType::BF16, {64, 96, 3, 3}, 204, 0.05f);
  const Tensor bias = random_normal_tensor(DType::BF16, {64}, 205);
  const Tensor dw = to_device(w, Device::CUDA), dbias = to_device(bias, Device::CUDA);
  Tensor t = empty(DType::F32, x.shape, Device::CUDA), stored = empty(DType::F32, {64, 24, 40}, Device::CUDA);
  group_norm(dx, dg, db, 32, 1e-6f, true, t, &dm);
  conv2d(t, dw, dbias, {}, stored);
  Tensor folded = empty(DType::F32, {64, 24, 40}, Device::CUDA);
  group_norm_conv2d(dx, dg, db, 32, 1e-6f, true, dw, dbias, {}, folded, nullptr, &dm);
  const Tensor s = to_device(stored, Device::CPU), f = to_device(folded, Device::CPU);
  EXPECT_EQ(std::memcmp(s.data, f.data, s.nbytes()), 0) << "folded";
}

}  // namespace
}  // namespace tf
