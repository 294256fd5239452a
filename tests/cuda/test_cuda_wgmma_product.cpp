// The wgmma product (backend/cuda/kernels/linear/gemm_wgmma.h): its fused epilogues give the bytes of
// its plain product followed by the element-wise op, a row's bytes do not depend on the rows beside
// it, and the plain product stays within a bf16 step of the CPU's (the contract measures it exactly).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/elementwise/residual_add.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/linear/linear.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

namespace tf {
namespace {

Tensor rnd(Shape s, uint32_t seed, float scale) {
  return to_device(check::random_normal_tensor(DType::BF16, std::move(s), seed, scale), Device::CUDA);
}
std::vector<uint16_t> bytes_of(const Tensor& t) {
  const Tensor h = to_device(t, Device::CPU);
  std::vector<uint16_t> v(static_cast<size_t>(h.numel()));
  std::memcpy(v.data(), h.data, v.size() * sizeof(uint16_t));
  return v;
}
Tensor copy_of(const Tensor& t) {
  Tensor c = empty(t.dtype, t.shape, t.device);
  copy_into(c, t);
  return c;
}

// Sizes with partial row and column tiles, a k that ends inside a 64-wide k tile (TMA reads the rest
// as zeros), and the released block's o product at a picture's rows and at a guidance step's (bands of
// row tiles, one short).
struct Geometry {
  int64_t m, k, n;
};
const Geometry kGeometries[] = {{200, 192, 264}, {300, 128, 136}, {136, 200, 520}, {4196, 3072, 3072}, {8392, 3072, 3072}};

TEST(CudaWgmmaProduct, GatedResidualIsTheProductThenTheGatedAdd) {
  TF_REQUIRE_CUDA_GPU();
  for (const Geometry& g : kGeometries) {
    const Tensor x = rnd({g.m, g.k}, 1, 1.0f), w = rnd({g.n, g.k}, 2, 0.05f), gate = rnd({g.n}, 3, 0.5f);
    const Tensor h0 = rnd({g.m, g.n}, 4, 1.0f);
    Tensor fused = copy_of(h0), separate = copy_of(h0);
    {
      variants::Override e(Variant::linear_epilogue, "fused");
      linear(x, w, {.residual = &fused, .gate = &gate});
    }
    {
      variants::Override e(Variant::linear_epilogue, "separate"), p(Variant::gemm, "wgmma");
      Tensor y = empty(DType::BF16, {g.m, g.n}, Device::CUDA);
      linear(x, w, y);
      residual_add(separate, y, &gate);
    }
    EXPECT_EQ(bytes_of(fused), bytes_of(separate)) << g.m << " x " << g.k << " x " << g.n;
  }
}

TEST(CudaWgmmaProduct, SituEpilogueIsTheTwoProductsThenSitu) {
  TF_REQUIRE_CUDA_GPU();
  for (const Geometry& g : kGeometries) {
    const Tensor x = rnd({g.m, g.k}, 5, 1.0f), wg = rnd({g.n, g.k}, 6, 0.08f), wu = rnd({g.n, g.k}, 7, 0.08f);
    Tensor fused = empty(DType::BF16, {g.m, g.n}, Device::CUDA), separate = empty(DType::BF16, {g.m, g.n}, Device::CUDA);
    {
      variants::Override e(Variant::linear_epilogue, "fused");
      linear_gated_product(x, wg, wu, GatedActivation::situ, fused);
    }
    {
      variants::Override p(Variant::gemm, "wgmma");
      Tensor up = empty(DType::BF16, {g.m, g.n}, Device::CUDA), gt = empty(DType::BF16, {g.m, g.n}, Device::CUDA);
      linear(x, wu, up);
      linear(x, wg, gt);
      situ_gated_product(up, gt, separate);
    }
    EXPECT_EQ(bytes_of(fused), bytes_of(separate)) << g.m << " x " << g.k << " x " << g.n;
  }
}

TEST(CudaWgmmaProduct, RowsKeepTheirBytesWhateverRowsShareTheProduct) {
  TF_REQUIRE_CUDA_GPU();
  variants::Override p(Variant::gemm, "wgmma");
  const int64_t k = 512, n = 256;
  const Tensor x = rnd({1000, k}, 8, 1.0f), w = rnd({n, k}, 9, 0.05f);
  Tensor all = empty(DType::BF16, {1000, n}, Device::CUDA), part = empty(DType::BF16, {300, n}, Device::CUDA);
  linear(x, w, all);
  linear(x.rows(700, 1000), w, part);  // rows 700.. sit at other places in other tiles
  const std::vector<uint16_t> a = bytes_of(all), b = bytes_of(part);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), a.begin() + 700 * n));
}

TEST(CudaWgmmaProduct, PlainProductIsWithinABf16StepOfTheCpus) {
  TF_REQUIRE_CUDA_GPU();
  variants::Override p(Variant::gemm, "wgmma");
  const int64_t m = 260, k = 1024, n = 520;
  const Tensor x = rnd({m, k}, 10, 1.0f), w = rnd({n, k}, 11, 0.05f);
  Tensor y = empty(DType::BF16, {m, n}, Device::CUDA), yc = empty(DType::BF16, {m, n});
  linear(x, w, y);
  linear(to_device(x, Device::CPU), to_device(w, Device::CPU), yc);
  const std::vector<uint16_t> g = bytes_of(y), c = bytes_of(yc);
  int64_t off = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const float a = float_from_bf16_bits(g[i]), b = float_from_bf16_bits(c[i]);
    if (std::fabs(a - b) > std::ldexp(1.0f, -7) * std::fabs(b) + 1e-6f) ++off;
  }
  EXPECT_EQ(off, 0) << "of " << g.size() << " values";
}

}  // namespace
}  // namespace tf
