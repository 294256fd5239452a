// The few-outputs convolutions (at most 4 output channels, 3x3, stride 1: the VAE's conv_out), which stage the
// picture itself (its GroupNorm folded in), against the CPU's op: the terms w * (hi + lo) differ from the CPU's
// w * x by at most 2^-16 |w x| and each fp32 sum is within n u of its terms, so the two are within
// (2^-16 + 2 n 2^-24) sum |w x|; every output written; the same bytes on a repeat. The control, the CPU
// without one channel's centre tap, must be outside.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
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
  bool up, residual, norm;
};

Tensor nan_filled(const Shape& s) {
  Tensor t = empty(DType::F32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  return to_device(t, Device::CUDA);
}

Tensor host_copy(const Tensor& t) {
  Tensor h = empty(t.dtype, t.shape);
  copy_into(h, t);
  return h;
}

Tensor abs_of(const Tensor& t) {  // host copy with |values|, F32 or BF16 kept
  Tensor h = host_copy(t);
  if (h.dtype == DType::F32)
    for (int64_t i = 0; i < h.numel(); ++i) h.ptr<float>()[i] = std::fabs(h.ptr<float>()[i]);
  else
    for (int64_t i = 0; i < h.numel(); ++i) h.ptr<uint16_t>()[i] &= 0x7FFF;
  return h;
}

TEST(CudaConv, FewOutputsAgreeWithTheCpu) {
  TF_REQUIRE_CUDA_GPU();
  const Case cases[] = {
      {96, 3, 37, 70, false, false, true},   // conv_out: GroupNorm + SiLU folded, partial tiles both ways
      {96, 3, 33, 45, false, true, false},   // plain, with a residual
      {64, 1, 7, 5, false, false, false},    // one output, a picture smaller than a tile
      {128, 4, 20, 41, true, true, false},   // four outputs through the nearest 2x upsample
      {128, 2, 64, 96, false, false, true},  // whole tiles
  };
  uint32_t seed = 500;
  for (const Case& c : cases) {
    const int64_t H = c.up ? 2 * c.H : c.H, W = c.up ? 2 * c.W : c.W;
    Tensor hx = random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, seed, 2.0f);
    for (int64_t i = 0; i < hx.numel(); ++i) hx.ptr<float>()[i] += 1.5f;  // a group mean away from zero
    const Tensor hw = random_normal_tensor(DType::BF16, {c.Co, c.Ci, 3, 3}, seed + 1, 0.05f);
    const Tensor b = random_normal_tensor(DType::BF16, {c.Co}, seed + 2);
    const Tensor r = random_normal_tensor(DType::F32, {c.Co, H, W}, seed + 3);
    const Tensor g = random_normal_tensor(DType::BF16, {c.Ci}, seed + 4);
    const Tensor beta = random_normal_tensor(DType::BF16, {c.Ci}, seed + 5);
    seed += 6;
    Tensor hw_dropped = host_copy(hw);
    for (int64_t co = 0; co < c.Co; ++co) hw_dropped.ptr<uint16_t>()[co * c.Ci * 9 + 4] = 0;
    auto run = [&](Device d, const Tensor& w) {
      Tensor y = d == Device::CUDA ? nan_filled({c.Co, H, W}) : empty(DType::F32, {c.Co, H, W});
      const Tensor dx = to_device(hx, d), dw = to_device(w, d), db = to_device(b, d), dr = to_device(r, d);
      const Tensor* res = c.residual ? &dr : nullptr;
      if (c.norm) group_norm_conv2d(dx, to_device(g, d), to_device(beta, d), 32, 1e-6f, true, dw, db, {}, y, res);
      else if (c.up) upsample_nearest2x_conv2d(dx, dw, db, {}, y, res);
      else conv2d(dx, dw, db, {}, y, res);
      return to_device(y, Device::CPU);
    };
    const Tensor picture = run(Device::CUDA, hw), again = run(Device::CUDA, hw), cpu = run(Device::CPU, hw);
    const Tensor control = run(Device::CPU, hw_dropped);
    // sum |w| |v| over each output's terms (v the convolution's input), on the CPU
    Tensor v = empty(DType::F32, {c.Ci, c.H, c.W});
    if (c.norm) group_norm(hx, g, beta, 32, 1e-6f, true, v);
    else v = hx;
    Tensor zero_bias = empty(DType::BF16, {c.Co});
    std::memset(zero_bias.data, 0, zero_bias.nbytes());
    Tensor terms = empty(DType::F32, {c.Co, H, W});
    if (c.up) upsample_nearest2x_conv2d(abs_of(v), abs_of(hw), zero_bias, {}, terms);
    else conv2d(abs_of(v), abs_of(hw), zero_bias, {}, terms);
    const double n = double(c.Ci) * 9 + 2, bound_per_term = 0x1p-16 + 2 * n * 0x1p-24;
    double worst = 0.0, worst_control = 0.0;
    size_t unwritten = 0;
    for (int64_t i = 0; i < picture.numel(); ++i) {
      const float p = picture.ptr<float>()[i], s = cpu.ptr<float>()[i], k = control.ptr<float>()[i];
      unwritten += p != p;
      const double bound = bound_per_term * (terms.ptr<float>()[i] + std::fabs(p));  // (the last adds' ulp)
      worst = std::max(worst, std::fabs(double(p) - s) / bound);
      worst_control = std::max(worst_control, std::fabs(double(p) - k) / bound);
    }
    const std::string what = "Ci " + std::to_string(c.Ci) + " Co " + std::to_string(c.Co) + " " +
                             std::to_string(H) + "x" + std::to_string(W) + (c.norm ? " norm" : "") + (c.up ? " up" : "");
    EXPECT_EQ(unwritten, 0u) << what << ": outputs left unwritten";
    EXPECT_LE(worst, 1.0) << what;
    EXPECT_GT(worst_control, 3.0) << what << ": the control (one tap dropped) passes";
    EXPECT_EQ(std::memcmp(picture.data, again.data, picture.nbytes()), 0) << what << ": other bytes on a repeat";
  }
}

}  // namespace
}  // namespace tf
