#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <cstring>
#include <random>
#include <vector>

#include "backend/conv/conv2d.h"
#include "backend/norm/group_norm.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/conv/upsample_nearest2x.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"
#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

#ifdef TF_HAVE_CUDA
#include <cuda_bf16.h>

#include "backend/cuda/kernels/channels_f32.h"
#include "backend/cuda/runtime/check.h"
#endif

namespace tf {
namespace {

#ifdef TF_HAVE_CUDA
struct Shape2d {
  int Ci, Co, H, W, ks, stride;
  bool up, residual;
};

template <class T>
T* device_copy(const std::vector<T>& h) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

// How many of a's floats differ in their bits from b's, and how many of a's are NaN (left unwritten:
// the outputs start as all-ones bits).
struct BytesDiff {
  size_t differ = 0, nan = 0;
};
BytesDiff bytes_diff(const std::vector<float>& a, const std::vector<float>& b) {
  BytesDiff d;
  for (size_t i = 0; i < a.size(); ++i) {
    d.differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
    d.nan += a[i] != a[i];
  }
  return d;
}

// The conv's output bytes with the TMA-fed kernel on or off (the gathering wgmma kernel), its tiles as
// TF_CONV_OUTPUTS says.
std::vector<float> conv_bytes(const Shape2d& c, bool tma, uint32_t seed, const char* outputs = "auto",
                              const char* upsample = "upsampled") {
  const int pad = c.ks == 3 ? 1 : 0;
  cuda::ConvShape s{c.Ci, c.H, c.W, c.up, c.Co, c.ks, c.ks, c.stride, c.stride == 2 ? 0 : pad,
                    c.stride == 2 ? 0 : pad, pad, pad, 0, 0};
  cuda::conv_output_size(s);
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.f, 1.f);
  std::vector<float> x(size_t(c.Ci) * c.H * c.W), r(size_t(c.Co) * s.Ho * s.Wo);
  std::vector<__nv_bfloat16> w(size_t(c.Co) * c.Ci * c.ks * c.ks), b(c.Co);
  for (auto& v : x) v = n(rng);
  for (auto& v : r) v = n(rng);
  for (auto& v : w) v = __float2bfloat16(0.05f * n(rng));
  for (auto& v : b) v = __float2bfloat16(0.1f * n(rng));
  float *dx = device_copy(x), *dr = c.residual ? device_copy(r) : nullptr, *dy = nullptr;
  __nv_bfloat16 *dw = device_copy(w), *db = device_copy(b);
  EXPECT_EQ(cudaMalloc(&dy, r.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemset(dy, 0xFF, r.size() * sizeof(float)), cudaSuccess);  // NaN where nothing is written
  variants::Override operands(Variant::split_operands, tma ? "auto" : "gather");
  variants::Override tiles(Variant::conv_outputs, outputs);
  variants::Override up(Variant::conv_upsample, upsample);
  void* ws = nullptr;
  EXPECT_EQ(cudaMalloc(&ws, cuda::conv_workspace_bytes(s) + 16), cudaSuccess);
  cuda::launch_conv2d(dx, dw, db, dr, dy, s, ws, 0);
  std::vector<float> y(r.size());
  EXPECT_EQ(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (void* p : {static_cast<void*>(dx), static_cast<void*>(dr), static_cast<void*>(dy), static_cast<void*>(dw),
                  static_cast<void*>(db), ws})
    if (p) cudaFree(p);
  return y;
}
// The upsampled picture's convolution in double from the same inputs as conv_bytes (seed), and each
// output's scale sum |w x| + |bias| + |residual|; with `rounded_sums` each class's summed weights are
// rounded to bf16 first (what the sub-pixel kernel would compute without the weights' lo parts).
struct Reference {
  std::vector<double> y, scale;
};
Reference upsample_conv_reference(const Shape2d& c, uint32_t seed, bool rounded_sums = false) {
  const int Ho = 2 * c.H, Wo = 2 * c.W;
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.f, 1.f);
  std::vector<float> x(size_t(c.Ci) * c.H * c.W), r(size_t(c.Co) * Ho * Wo), w(size_t(c.Co) * c.Ci * 9), b(c.Co);
  for (auto& v : x) v = n(rng);
  for (auto& v : r) v = n(rng);
  for (auto& v : w) v = __bfloat162float(__float2bfloat16(0.05f * n(rng)));
  for (auto& v : b) v = __bfloat162float(__float2bfloat16(0.1f * n(rng)));
  Reference ref{std::vector<double>(r.size()), std::vector<double>(r.size())};
  for (int co = 0; co < c.Co; ++co)
    for (int oy = 0; oy < Ho; ++oy)
      for (int ox = 0; ox < Wo; ++ox) {
        double sum = b[co], scale = std::abs(b[co]);
        for (int ci = 0; ci < c.Ci; ++ci) {
          const float* wc = &w[(size_t(co) * c.Ci + ci) * 9];
          // the class's 2x2 taps: input (sy, sx) collects the 3x3 weights that land on it
          for (int sy = (oy - 1) / 2 - (oy == 0); sy <= (oy + 1) / 2; ++sy)
            for (int sx = (ox - 1) / 2 - (ox == 0); sx <= (ox + 1) / 2; ++sx) {
              if (sy < 0 || sy >= c.H || sx < 0 || sx >= c.W) continue;
              float wsum = 0.f;
              for (int ky = 0; ky < 3; ++ky)
                for (int kx = 0; kx < 3; ++kx) {
                  const int uy = oy - 1 + ky, ux = ox - 1 + kx;
                  if (uy >= 0 && uy < Ho && ux >= 0 && ux < Wo && uy / 2 == sy && ux / 2 == sx) wsum += wc[3 * ky + kx];
                }
              if (rounded_sums) wsum = __bfloat162float(__float2bfloat16(wsum));
              const double xv = x[(size_t(ci) * c.H + sy) * c.W + sx];
              sum += double(wsum) * xv;
              scale += std::abs(double(wsum) * xv);
            }
        }
        const size_t at = (size_t(co) * Ho + oy) * Wo + ox;
        if (c.residual) sum += r[at], scale += std::abs(r[at]);
        ref.y[at] = sum;
        ref.scale[at] = scale;
      }
  return ref;
}
// The largest |y - reference| / scale.
double worst_scaled_error(const std::vector<float>& y, const Reference& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(double(y[i]) - ref.y[i]) / ref.scale[i]);
  return worst;
}
double worst_scaled_error(const std::vector<double>& y, const Reference& ref) {
  return worst_scaled_error(std::vector<float>(y.begin(), y.end()), ref);
}

// The attention's inputs: q, k, v [D, N] from N(0, sigma^2) (q and k; v from N(0, 1)).
struct AttentionInputs {
  std::vector<float> q, k, v;
};
AttentionInputs attention_inputs(int D, int N, float sigma) {
  std::mt19937 rng(7);
  std::normal_distribution<float> n(0.f, 1.f);
  AttentionInputs in{std::vector<float>(size_t(D) * N), std::vector<float>(size_t(D) * N), std::vector<float>(size_t(D) * N)};
  for (auto* t : {&in.q, &in.k, &in.v})
    for (auto& x : *t) x = n(rng) * (t == &in.v ? 1.f : sigma);
  return in;
}

// The attention's output bytes with its operands split beforehand (TMA) or inside the products, the
// softmax as TF_SOFTMAX_ROWS says.
std::vector<float> attention_bytes(int D, int N, bool tma, const char* softmax = "resident", float sigma = 1.f) {
  const AttentionInputs in = attention_inputs(D, N, sigma);
  std::vector<float> o(in.q.size());
  float *dq = device_copy(in.q), *dk = device_copy(in.k), *dv = device_copy(in.v), *dout = device_copy(o), *ws = nullptr;
  EXPECT_EQ(cudaMemset(dout, 0xFF, o.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&ws, cuda::attention_workspace_floats(D, N) * sizeof(float)), cudaSuccess);
  {
    variants::Override operands(Variant::split_operands, tma ? "auto" : "gather");
    variants::Override rows(Variant::softmax_rows, softmax);
    cuda::launch_attention_single_head(dq, dk, dv, D, N, 1.f / 8.f, dout, ws, 0);
  }
  EXPECT_EQ(cudaMemcpy(o.data(), dout, o.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (float* p : {dq, dk, dv, dout, ws}) cudaFree(p);
  return o;
}

// The attention in double (scale 1 / 8, as attention_bytes), o [D, N].
std::vector<double> attention_reference(int D, int N, float sigma) {
  const AttentionInputs in = attention_inputs(D, N, sigma);
  std::vector<double> o(size_t(D) * N), s(N), qi(D);
  for (int i = 0; i < N; ++i) {
    for (int d = 0; d < D; ++d) qi[d] = in.q[size_t(d) * N + i];
    double m = -INFINITY, l = 0.0;
    for (int j = 0; j < N; ++j) {
      double dot = 0.0;
      for (int d = 0; d < D; ++d) dot += qi[d] * double(in.k[size_t(d) * N + j]);
      s[j] = dot / 8.0;
      m = std::max(m, s[j]);
    }
    for (int j = 0; j < N; ++j) l += (s[j] = std::exp(s[j] - m));
    for (int d = 0; d < D; ++d) {
      double acc = 0.0;
      for (int j = 0; j < N; ++j) acc += s[j] * double(in.v[size_t(d) * N + j]);
      o[size_t(d) * N + i] = acc / l;
    }
  }
  return o;
}

double worst_abs_error(const std::vector<float>& y, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(double(y[i]) - ref[i]));
  return worst;
}
#endif

// With the softmax pass between the products (TF_SOFTMAX_ROWS=resident) the TMA products give the gathering ones' bytes.
TEST(CudaAttention, TmaProductsGiveTheGatheringProductsBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  for (int N : {136, 4104}) {  // a partial tile of queries, keys and K; two query blocks
    const std::vector<float> tma = attention_bytes(64, N, true), gather = attention_bytes(64, N, false);
    const auto [differ, nan] = bytes_diff(tma, gather);
    EXPECT_EQ(differ, 0u) << "N " << N;
    EXPECT_EQ(nan, 0u) << "outputs left unwritten, N " << N;
  }
#endif
}

// The register-resident softmax (rows of 4,096 and 16,384) gives the three-read kernel's bytes.
TEST(CudaAttention, ResidentSoftmaxGivesTheStridedKernelsBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  for (int N : {4096, 16384}) {
    ASSERT_EQ(cuda::softmax_rows_resident_width(N), N) << "rows of " << N << " should take the resident kernel";
    const std::vector<float> resident = attention_bytes(64, N, true, "resident");
    std::vector<float> strided;
    {
      variants::Override rows(Variant::softmax_rows, "strided");
      EXPECT_EQ(cuda::softmax_rows_resident_width(N), 0) << "TF_SOFTMAX_ROWS=strided left rows of " << N << " resident";
      strided = attention_bytes(64, N, true, "strided");
    }
    const auto [differ, nan] = bytes_diff(resident, strided);
    EXPECT_EQ(differ, 0u) << "N " << N;
    EXPECT_EQ(nan, 0u) << "outputs left unwritten, N " << N;
  }
#endif
}

// The softmax split over the products (TF_SOFTMAX_ROWS=tiles: each 128-key tile's exp and stats from the scores'
// epilogue, the values' K blocks scaled by their factors) is as close to float64 as the softmax pass (within 1.25x
// its error and 2e-6), every output written: a partial key tile, two query blocks, scores spread wide (sigma 3:
// tile maxima far apart, most weights tiny).
TEST(CudaAttention, SoftmaxByTilesIsAsCloseToFloat64AsTheSoftmaxPass) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  struct Case {
    int D, N;
    float sigma;
  };
  for (const Case c : {Case{64, 136, 1.f}, Case{128, 1032, 1.f}, Case{64, 4104, 1.f}, Case{64, 1032, 3.f}}) {
    const std::vector<double> ref = attention_reference(c.D, c.N, c.sigma);
    const std::vector<float> tiles = attention_bytes(c.D, c.N, true, "tiles", c.sigma);
    const std::vector<float> pass = attention_bytes(c.D, c.N, true, "resident", c.sigma);
    const double e_tiles = worst_abs_error(tiles, ref), e_pass = worst_abs_error(pass, ref);
    EXPECT_LE(e_tiles, 1.25 * e_pass + 2e-6) << "D " << c.D << " N " << c.N << " sigma " << c.sigma << ": tiles "
                                             << e_tiles << ", pass " << e_pass;
    EXPECT_EQ(bytes_diff(tiles, tiles).nan, 0u) << "outputs left unwritten, N " << c.N;
    EXPECT_GT(bytes_diff(tiles, pass).differ, 0u) << "TF_SOFTMAX_ROWS=tiles did not take the tiles' path";
    EXPECT_EQ(bytes_diff(tiles, attention_bytes(c.D, c.N, true, "tiles", c.sigma)).differ, 0u) << "a repeat differs";
  }
#endif
}

// Same split, same K order, same MMAs: the two wgmma kernels agree to the bit, every output written (the
// TMA kernels' residual staged by their store warps: row, column and halo tiles, 192 outputs as halves).
TEST(CudaConv, TmaKernelGivesTheGatheringKernelsBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  const Shape2d shapes[] = {
      {128, 128, 40, 36, 3, 1, false, true},  {256, 128, 33, 45, 3, 2, false, true},
      {64, 256, 12, 16, 3, 1, true, false},   {128, 64, 23, 19, 1, 1, false, true},
      {192, 5, 17, 150, 3, 1, false, false},  // a partial channel tile (4 or fewer go to conv_few_outputs)
      {128, 200, 20, 36, 3, 1, false, true},  {128, 96, 40, 36, 3, 1, false, true},  // (96 inputs: a 32-deep last tile)
      {64, 96, 5, 250, 3, 1, false, true},    {192, 192, 4, 256, 3, 1, false, true},
  };
  uint32_t seed = 1;
  for (const Shape2d& c : shapes) {
    const std::vector<float> tma = conv_bytes(c, true, seed), gather = conv_bytes(c, false, seed);
    ++seed;
    const auto [differ, nan] = bytes_diff(tma, gather);
    EXPECT_EQ(differ, 0u) << "Ci " << c.Ci << " Co " << c.Co << " " << c.H << "x" << c.W << " k" << c.ks << " s"
                          << c.stride << (c.up ? " up" : "");
    EXPECT_EQ(nan, 0u) << "outputs left unwritten";
  }
#endif
}

// 96 or 192 output channels as the wgmma's N, with and without each tap row's inputs read once (the
// halo tiles: one picture row of 128 outputs, 3x3, stride 1): the 128-channel row tiles' bytes, every
// output written.
TEST(CudaConv, OutputChannelsAsNGiveTheRowTilesBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  const Shape2d shapes[] = {
      {96, 96, 40, 36, 3, 1, false, true},   {192, 96, 33, 45, 3, 1, false, false}, {96, 192, 17, 30, 3, 1, true, true},
      {384, 192, 23, 19, 1, 1, false, true}, {192, 192, 33, 45, 3, 2, false, true},
      // halo tiles: 96 inputs (a 32-deep last tile), 64 (one chunk), 192 (three), a partial row, upsampled
      {96, 96, 6, 256, 3, 1, false, true},   {64, 96, 5, 256, 3, 1, false, false},  {192, 96, 5, 384, 3, 1, false, false},
      {192, 192, 4, 256, 3, 1, false, true}, {96, 192, 3, 250, 3, 1, false, true},  {96, 192, 3, 64, 3, 1, true, true},
      {384, 192, 4, 128, 3, 1, false, true},  // too many chunks for the halo's rings: the column tiles
  };
  uint32_t seed = 11;
  for (const Shape2d& c : shapes) {
    const std::vector<float> rows = conv_bytes(c, true, seed, "rows");
    for (const char* outputs : {"auto", "columns"}) {
      const std::vector<float> cols = conv_bytes(c, true, seed, outputs);
      const auto [differ, nan] = bytes_diff(cols, rows);
      EXPECT_EQ(differ, 0u) << outputs << ": Ci " << c.Ci << " Co " << c.Co << " " << c.H << "x" << c.W << " k"
                            << c.ks << " s" << c.stride << (c.up ? " up" : "");
      EXPECT_EQ(nan, 0u) << outputs << ": outputs left unwritten";
    }
    ++seed;
  }
#endif
}

// The halo tiles take 192 outputs as two 96-output tiles a position tile, stored by the store warps with the
// residual staged: the one 192-wide column tile's bytes (192 inputs, one picture row of 128, partial rows,
// with and without a residual).
TEST(CudaConv, HalvesGiveTheColumnsBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  const Shape2d shapes[] = {
      {192, 192, 6, 256, 3, 1, false, true}, {192, 192, 5, 250, 3, 1, false, false}, {96, 192, 9, 130, 3, 1, false, true},
      {64, 192, 4, 128, 3, 1, false, true},
  };
  uint32_t seed = 71;
  for (const Shape2d& c : shapes) {
    const std::vector<float> cols = conv_bytes(c, true, seed, "columns");
    const std::vector<float> halves = conv_bytes(c, true, seed, "auto");
    const auto [differ, nan] = bytes_diff(halves, cols);
    EXPECT_EQ(differ, 0u) << "Ci " << c.Ci << " Co " << c.Co << " " << c.H << "x" << c.W << " k" << c.ks << " s"
                          << c.stride << (c.residual ? " residual" : "");
    EXPECT_EQ(nan, 0u) << "outputs left unwritten";
    ++seed;
  }
#endif
}

// Folding the GroupNorm into the convolution's operand split gives the bytes of storing it first.
TEST(CudaConv, FoldedGroupNormGivesTheStoredOnesBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  using check::random_normal_tensor;
  struct Case {
    int64_t Ci, Co, H, W;
    bool silu, residual;
  };
  for (const Case& c : {Case{128, 128, 24, 40, true, true}, Case{64, 192, 17, 9, false, false},
                        Case{96, 64, 17, 21, true, true}, Case{96, 3, 37, 70, true, false}}) {
    Tensor x = random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, 51, 2.0f);
    for (int64_t i = 0; i < x.numel(); ++i) x.ptr<float>()[i] += 3.0f;  // a group mean away from zero
    const Tensor g = random_normal_tensor(DType::BF16, {c.Ci}, 52), b = random_normal_tensor(DType::BF16, {c.Ci}, 53);
    const Tensor w = random_normal_tensor(DType::BF16, {c.Co, c.Ci, 3, 3}, 54, 0.05f);
    const Tensor bias = random_normal_tensor(DType::BF16, {c.Co}, 55), r = random_normal_tensor(DType::F32, {c.Co, c.H, c.W}, 56);
    const Tensor dx = to_device(x, Device::CUDA), dg = to_device(g, Device::CUDA), db = to_device(b, Device::CUDA);
    const Tensor dw = to_device(w, Device::CUDA), dbias = to_device(bias, Device::CUDA), dr = to_device(r, Device::CUDA);
    const Tensor* res = c.residual ? &dr : nullptr;
    Tensor t = empty(DType::F32, x.shape, Device::CUDA), stored = empty(DType::F32, {c.Co, c.H, c.W}, Device::CUDA);
    group_norm(dx, dg, db, 32, 1e-6f, c.silu, t);
    conv2d(t, dw, dbias, {}, stored, res);
    Tensor folded = empty(DType::F32, {c.Co, c.H, c.W}, Device::CUDA);
    group_norm_conv2d(dx, dg, db, 32, 1e-6f, c.silu, dw, dbias, {}, folded, res);
    const Tensor a = to_device(stored, Device::CPU), f = to_device(folded, Device::CPU);
    EXPECT_EQ(std::memcmp(a.data, f.data, a.nbytes()), 0) << "Ci " << c.Ci << " silu " << c.silu;
  }
#endif
}

// A 1x1 convolution of x itself beside the folded one (TF_CONV_SHORTCUT=beside: x split once for both where the
// shapes allow; its own pass elsewhere) gives conv2d's bytes, the main output unchanged, every output written.
TEST(CudaConv, ConvolutionBesideGivesConv2dBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  using check::random_normal_tensor;
  struct Case {
    int64_t Ci, Co, Cs, H, W;
  };
  // the small decoder's up blocks (192 -> 96, 384 -> 192); positions not a multiple of 4; 96 inputs (own pass)
  for (const Case& c : {Case{192, 96, 96, 20, 136}, Case{384, 192, 192, 12, 64}, Case{128, 64, 128, 17, 9},
                        Case{96, 96, 64, 8, 40}}) {
    Tensor x = random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, 61, 2.0f);
    const Tensor g = random_normal_tensor(DType::BF16, {c.Ci}, 62), b = random_normal_tensor(DType::BF16, {c.Ci}, 63);
    const Tensor w = random_normal_tensor(DType::BF16, {c.Co, c.Ci, 3, 3}, 64, 0.05f);
    const Tensor ws = random_normal_tensor(DType::BF16, {c.Cs, c.Ci, 1, 1}, 65, 0.05f);
    const Tensor bias = random_normal_tensor(DType::BF16, {c.Co}, 66), bs = random_normal_tensor(DType::BF16, {c.Cs}, 67);
    const Device d = Device::CUDA;
    const Tensor dx = to_device(x, d), dg = to_device(g, d), db = to_device(b, d), dw = to_device(w, d);
    const Tensor dws = to_device(ws, d), dbias = to_device(bias, d), dbs = to_device(bs, d);
    Tensor want = empty(DType::F32, {c.Co, c.H, c.W}, d), want_s = empty(DType::F32, {c.Cs, c.H, c.W}, d);
    group_norm_conv2d(dx, dg, db, 32, 1e-6f, true, dw, dbias, {}, want);
    conv2d(dx, dws, dbs, {1, 0, 0, 0, 0}, want_s);
    Tensor got = empty(DType::F32, {c.Co, c.H, c.W}, d), got_s = empty(DType::F32, {c.Cs, c.H, c.W}, d);
    // NaN where nothing is written, on the engine's stream: got's memory may be a workspace the separate path's
    // kernels, still queued there, read (the legacy stream's cudaMemset would not wait for them)
    EXPECT_EQ(cudaMemsetAsync(got.data, 0xFF, got.nbytes(), cuda::stream()), cudaSuccess);
    EXPECT_EQ(cudaMemsetAsync(got_s.data, 0xFF, got_s.nbytes(), cuda::stream()), cudaSuccess);
    const Conv1x1OfInput beside{&dws, &dbs, &got_s};
    {
      variants::Override together(Variant::conv_shortcut, "beside");
      group_norm_conv2d(dx, dg, db, 32, 1e-6f, true, dw, dbias, {}, got, nullptr, &beside);
    }
    Tensor again = empty(DType::F32, {c.Co, c.H, c.W}, d);  // the separate path twice: its own repeatability
    group_norm_conv2d(dx, dg, db, 32, 1e-6f, true, dw, dbias, {}, again);
    auto host = [](const Tensor& t) {
      const Tensor h = to_device(t, Device::CPU);
      return std::vector<float>(h.ptr<float>(), h.ptr<float>() + h.numel());
    };
    const std::vector<float> a = host(want), f = host(got), r = host(again);
    const auto [differ, nan] = bytes_diff(f, a);
    const auto [differ_s, nan_s] = bytes_diff(host(got_s), host(want_s));
    const std::string at = "Ci " + std::to_string(c.Ci) + " " + std::to_string(c.H) + "x" + std::to_string(c.W);
    EXPECT_EQ(bytes_diff(r, a).differ, 0u) << "the separate path differs from itself, " << at;
    EXPECT_EQ(differ, 0u) << "main, " << at << " (" << nan << " left unwritten of " << a.size() << ")";
    EXPECT_EQ(differ_s, 0u) << "beside, " << at << " (" << nan_s << " left unwritten)";
  }
#endif
}

// Weights prepared once (tap-major, padded 96-channel taps, the sub-pixel classes' sums) give each call's own
// reordering's bytes; weights prepared for another op's layout are reordered per call, the same bytes again.
TEST(CudaConv, PreparedWeightsGiveThePerCallBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  using check::random_normal_tensor;
  struct Case {
    int64_t Ci, Co, H, W;
    int op;  // 0 conv2d, 1 group_norm_conv2d, 2 upsample_nearest2x_conv2d
  };
  for (const Case& c : {Case{128, 128, 20, 36, 0}, Case{96, 96, 17, 40, 1}, Case{192, 96, 9, 130, 1},
                        Case{128, 128, 10, 12, 2}, Case{192, 192, 8, 16, 2}}) {
    const Device d = Device::CUDA;
    const Tensor x = to_device(random_normal_tensor(DType::F32, {c.Ci, c.H, c.W}, 81, 2.0f), d);
    const Tensor g = to_device(random_normal_tensor(DType::BF16, {c.Ci}, 82), d);
    const Tensor b = to_device(random_normal_tensor(DType::BF16, {c.Ci}, 83), d);
    const Tensor w = to_device(random_normal_tensor(DType::BF16, {c.Co, c.Ci, 3, 3}, 84, 0.05f), d);
    const Tensor bias = to_device(random_normal_tensor(DType::BF16, {c.Co}, 85), d);
    const int64_t up = c.op == 2 ? 2 : 1;
    auto run = [&](const Conv2dGeometry& geo) {
      Tensor y = empty(DType::F32, {c.Co, up * c.H, up * c.W}, d);
      if (c.op == 0) conv2d(x, w, bias, geo, y);
      if (c.op == 1) group_norm_conv2d(x, g, b, 32, 1e-6f, true, w, bias, geo, y);
      if (c.op == 2) upsample_nearest2x_conv2d(x, w, bias, geo, y);
      return to_device(y, Device::CPU);
    };
    const Tensor want = run({});
    const PreparedConvWeights mine = prepare_conv2d_weights(w, {}, c.op == 2, c.op == 1);
    const PreparedConvWeights other = prepare_conv2d_weights(w, {}, c.op != 2, false);
    EXPECT_NE(mine.packed.data, nullptr) << "op " << c.op << " Ci " << c.Ci << ": nothing prepared";
    for (const PreparedConvWeights* p : {&mine, &other}) {
      Conv2dGeometry geo;
      geo.prepared = p;
      const Tensor got = run(geo);
      EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0)
          << "op " << c.op << " Ci " << c.Ci << (p == &mine ? " prepared" : " prepared for another op");
    }
  }
#endif
}

// 96 channels run on the TMA kernel as 128 with zero channels: the bytes of the zero-padded product.
TEST(CudaConv, PaddedChannelsGiveTheZeroPaddedPicturesBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  using check::random_normal_tensor;
  for (int64_t ks : {3, 1}) {
    const int64_t Ci = 96, Cp = 128, Co = 80, H = 19, W = 27;
    const Tensor x = random_normal_tensor(DType::F32, {Ci, H, W}, 71);
    const Tensor w = random_normal_tensor(DType::BF16, {Co, Ci, ks, ks}, 72, 0.05f);
    const Tensor bias = random_normal_tensor(DType::BF16, {Co}, 73), r = random_normal_tensor(DType::F32, {Co, H, W}, 74);
    Tensor xp = empty(DType::F32, {Cp, H, W}), wp = empty(DType::BF16, {Co, Cp, ks, ks});
    std::memset(xp.data, 0, xp.nbytes());
    std::memset(wp.data, 0, wp.nbytes());
    std::memcpy(xp.data, x.data, x.nbytes());
    for (int64_t co = 0; co < Co; ++co)
      std::memcpy(wp.ptr<uint16_t>() + co * Cp * ks * ks, w.ptr<const uint16_t>() + co * Ci * ks * ks,
                  size_t(Ci * ks * ks) * 2);
    const int pad = ks == 3 ? 1 : 0;
    const Conv2dGeometry g{1, pad, pad, pad, pad};
    const Tensor dr = to_device(r, Device::CUDA), db = to_device(bias, Device::CUDA);
    Tensor y = empty(DType::F32, {Co, H, W}, Device::CUDA), yp = empty(DType::F32, {Co, H, W}, Device::CUDA);
    conv2d(to_device(x, Device::CUDA), to_device(w, Device::CUDA), db, g, y, &dr);
    conv2d(to_device(xp, Device::CUDA), to_device(wp, Device::CUDA), db, g, yp, &dr);
    const Tensor a = to_device(y, Device::CPU), b = to_device(yp, Device::CPU);
    EXPECT_EQ(std::memcmp(a.data, b.data, a.nbytes()), 0) << "k" << ks;
  }
#endif
}

// A nearest 2x upsample + 3x3 convolution as sub-pixel classes (summed weights as bf16 hi + lo): every
// output written, within 2^-14 of its scale (sum |w x|) of the double reference, and no further from it
// than 4x the upsampled picture's convolution (itself within 2^-14); the control, the summed weights
// rounded to bf16 (the lo parts dropped), is caught by that criterion. Rows and column tiles, partial tiles.
TEST(CudaConv, SubPixelUpsampleIsWithinTheUpsampledConvolutionsError) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  const Shape2d shapes[] = {
      {64, 256, 12, 16, 3, 1, true, false}, {128, 192, 9, 150, 3, 1, true, true}, {192, 192, 3, 128, 3, 1, true, false},
      {384, 384, 2, 128, 3, 1, true, false}, {64, 64, 7, 33, 3, 1, true, true},     {128, 130, 5, 40, 3, 1, true, false},
  };
  uint32_t seed = 81;
  for (const Shape2d& c : shapes) {
    const Reference ref = upsample_conv_reference(c, seed);
    const std::vector<float> sub = conv_bytes(c, true, seed, "auto", "subpixel");
    const std::vector<float> up = conv_bytes(c, true, seed, "auto", "upsampled");
    const double e_sub = worst_scaled_error(sub, ref), e_up = worst_scaled_error(up, ref);
    const Reference bad = upsample_conv_reference(c, seed, true);
    const double e_bad = worst_scaled_error(bad.y, ref);
    const std::string what = "Ci " + std::to_string(c.Ci) + " Co " + std::to_string(c.Co) + " " +
                             std::to_string(c.H) + "x" + std::to_string(c.W);
    EXPECT_EQ(bytes_diff(sub, sub).nan, 0u) << what << ": outputs left unwritten";
    EXPECT_LE(e_up, 0x1p-14) << what;
    EXPECT_LE(e_sub, 0x1p-14) << what;
    EXPECT_LE(e_sub, 4 * e_up) << what << " (upsampled " << e_up << ")";
    EXPECT_GT(e_bad, 4 * e_up) << what << ": the control (summed weights rounded to bf16) passes";
    std::printf("subpixel %s: worst error / scale %.3g, upsampled %.3g, control %.3g\n", what.c_str(), e_sub, e_up,
                e_bad);
    ++seed;
  }
#endif
}

// Reading the input through the upsample gives the bytes of storing the upsampled picture first.
TEST(CudaConv, FoldedUpsampleGivesTheStoredOnesBytes) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  using check::random_normal_tensor;
  for (int64_t ci : {64, 32}) {  // the TMA kernel, then the gathering one
    const Tensor x = random_normal_tensor(DType::F32, {ci, 13, 22}, 61);
    const Tensor w = random_normal_tensor(DType::BF16, {96, ci, 3, 3}, 62, 0.05f);
    const Tensor bias = random_normal_tensor(DType::BF16, {96}, 63);
    const Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA), db = to_device(bias, Device::CUDA);
    Tensor u = empty(DType::F32, {ci, 26, 44}, Device::CUDA), stored = empty(DType::F32, {96, 26, 44}, Device::CUDA);
    upsample_nearest2x(dx, u);
    conv2d(u, dw, db, {}, stored);
    Tensor folded = empty(DType::F32, {96, 26, 44}, Device::CUDA);
    variants::Override up(Variant::conv_upsample, "upsampled");
    upsample_nearest2x_conv2d(dx, dw, db, {}, folded);
    const Tensor a = to_device(stored, Device::CPU), f = to_device(folded, Device::CPU);
    EXPECT_EQ(std::memcmp(a.data, f.data, a.nbytes()), 0) << "Ci " << ci;
  }
#endif
}

}  // namespace
}  // namespace tf
