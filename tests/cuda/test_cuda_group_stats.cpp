// GroupNorm statistics taken by the CUDA convolution that writes a picture (TF_GROUP_STATS): where the consumers
// take them (halo tiles: 96 outputs, 192 as two, a row not a multiple of the tile; row tiles: 384 outputs, 1x1 with
// a residual, sub-pixel classes) within fp32 rounding of the exact statistics, elsewhere by a pass within fp64
// rounding; the output's bytes untouched, the same bytes every run.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/norm/group_stats.h"
#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

#ifdef TF_HAVE_CUDA
#include "backend/cuda/kernels/channels_f32.h"
#endif

namespace tf {
namespace {

#ifdef TF_HAVE_CUDA
struct Case {
  const char* what;
  int64_t Ci, Co, H, W;
  int ks;
  bool up, norm, residual;
  int taker;  // who takes the statistics: 0 a pass, 1 the row tiles' consumers, 2 the halo tiles' (only with `all`)
};

std::vector<double> host_doubles(const Tensor& t) {
  const Tensor h = to_device(t, Device::CPU);
  return std::vector<double>(h.ptr<double>(), h.ptr<double>() + h.numel());
}

// The case's output (its stats in `stats` where given), on the CUDA device.
Tensor run_case(const Case& c, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& g,
                const Tensor& b, const Tensor* r, GroupStats* stats) {
  const int64_t up = c.up ? 2 : 1;
  Tensor y = empty(DType::F32, {c.Co, up * c.H, up * c.W}, Device::CUDA);
  const Conv2dGeometry geo = c.ks == 3 ? kConvSame3x3 : kConvPointwise;
  if (c.norm) group_norm_conv2d(x, g, b, 32, 1e-6f, true, w, bias, geo, y, r, nullptr, nullptr, stats);
  else if (c.up) upsample_nearest2x_conv2d(x, w, bias, geo, y, r, stats);
  else conv2d(x, w, bias, geo, y, r, stats);
  return y;
}
#endif

TEST(CudaGroupStats, TakenAsTheConvolutionStoresAreItsOutputsStatistics) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  using check::random_normal_tensor;
  const Case cases[] = {
      {"halo tiles (192 -> 96), rows of 200", 192, 96, 9, 200, 3, false, true, false, 2},
      {"halo tiles (96 -> 96), residual", 96, 96, 5, 256, 3, false, true, true, 2},
      {"192 outputs as two halo tiles", 192, 192, 6, 256, 3, false, true, true, 2},
      {"row tiles (384 outputs), residual", 384, 384, 20, 36, 3, false, true, true, 1},
      {"1x1 row tiles, residual (the attention's out)", 384, 384, 16, 24, 1, false, false, true, 1},
      {"sub-pixel classes (384)", 384, 384, 8, 12, 3, true, false, false, 1},
      {"sub-pixel classes with a residual: a pass", 64, 128, 6, 10, 3, true, false, true, 0},
      {"96-output column tiles (1x1): a pass", 192, 96, 12, 20, 1, false, false, false, 0},
      {"192-output column tiles: a pass", 192, 192, 12, 64, 3, false, true, false, 0},
      {"gathering kernel (32 inputs): a pass", 32, 64, 10, 14, 3, false, false, false, 0},
  };
  for (const char* mode : {"all", "rows"}) {
    for (const Case& c : cases) {
      variants::Override taken(Variant::group_stats, mode);
      const bool epilogue = c.taker == 1 || (c.taker == 2 && mode == std::string("all"));
      const Device d = Device::CUDA;
      const int64_t up = c.up ? 2 : 1;
      const Tensor x = to_device(random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, 71, 2.0f), d);
      const Tensor w = to_device(random_normal_tensor(DType::BF16, {c.Co, c.Ci, c.ks, c.ks}, 72, 0.05f), d);
      Tensor bias_h = random_normal_tensor(DType::BF16, {c.Co}, 73);
      for (int64_t i = 0; i < c.Co; i += 3) bias_h.ptr<uint16_t>()[i] = 0x4248;  // 50: groups far from mean 0
      const Tensor bias = to_device(bias_h, d);
      const Tensor g = to_device(random_normal_tensor(DType::BF16, {c.Ci}, 74), d);
      const Tensor b = to_device(random_normal_tensor(DType::BF16, {c.Ci}, 75), d);
      const Tensor r = to_device(random_normal_tensor(DType::F32, {c.Co, up * c.H, up * c.W}, 76), d);
      const Tensor* res = c.residual ? &r : nullptr;

      cuda::ConvShape s{int(c.Ci), int(c.H), int(c.W), c.up, int(c.Co), c.ks, c.ks,
                        1, c.ks / 2, c.ks / 2, c.ks / 2, c.ks / 2, 0, 0};
      cuda::conv_output_size(s);
      EXPECT_EQ(cuda::conv_stats_tiles(s, c.norm, c.residual) > 0, epilogue)
          << c.what << ", " << mode << ": not the kernel the case is for";

      const Tensor plain = to_device(run_case(c, x, w, bias, g, b, res, nullptr), Device::CPU);
      GroupStats one = make_group_stats(32, 1e-6f, d), two = make_group_stats(32, 1e-6f, d);
      const Tensor y = to_device(run_case(c, x, w, bias, g, b, res, &one), Device::CPU);
      run_case(c, x, w, bias, g, b, res, &two);
      EXPECT_EQ(std::memcmp(y.data, plain.data, y.nbytes()), 0) << c.what << ": the statistics changed the output";
      const std::vector<double> got = host_doubles(one.mean_rstd), again = host_doubles(two.mean_rstd);
      EXPECT_EQ(std::memcmp(got.data(), again.data(), got.size() * sizeof(double)), 0) << c.what << ": not repeatable";
      GroupStats passed = make_group_stats(32, 1e-6f, d);
      {
        variants::Override pass(Variant::group_stats, "pass");
        run_case(c, x, w, bias, g, b, res, &passed);
      }
      const std::vector<double> by_pass = host_doubles(passed.mean_rstd);
      const int64_t n = y.numel() / 32;
      for (int grp = 0; grp < 32; ++grp) {
        const float* p = y.ptr<float>() + grp * n;
        long double m = 0, v = 0;
        for (int64_t i = 0; i < n; ++i) m += p[i];
        m /= n;
        for (int64_t i = 0; i < n; ++i) v += (p[i] - m) * (p[i] - m);
        const double mean = double(m), rstd = double(1.0L / std::sqrt(v / n + 1e-6L));
        const std::string at = std::string(c.what) + " (" + mode + "), group " + std::to_string(grp);
        // the runs' fp32 sums: ~2^-24 of the spread each; the pass's fp64 sums: ~2^-53
        for (const auto& [name, st] : {std::pair{"epilogue", &got}, std::pair{"pass", &by_pass}}) {
          const bool runs = epilogue && name == std::string("epilogue");
          EXPECT_NEAR((*st)[2 * grp], mean, 1e-13 * std::fabs(mean) + (runs ? 1e-6 : 1e-13) / rstd)
              << name << ", " << at;
          EXPECT_NEAR((*st)[2 * grp + 1], rstd, (runs ? 1e-6 : 1e-12) * rstd) << name << ", " << at;
        }
      }
    }
  }
#endif
}

}  // namespace
}  // namespace tf
