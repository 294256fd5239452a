#include <cmath>
#include <cstring>
#include <vector>

#include "backend/upload.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/error.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

#ifdef TF_HAVE_CUDA
#include "backend/cuda/check.h"
#include "backend/cuda/gemm.h"
#endif

namespace tf {
namespace {

Tensor random_bf16(Shape s, uint32_t seed, float scale = 1.0f) {
  return check::random_normal_tensor(DType::BF16, std::move(s), seed, scale);
}

TEST(CudaRuntime, CopiesRoundTripAndCountsPeak) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  Tensor h = random_bf16({1000, 37}, 1);
  cuda::reset_peak_memory();
  size_t before = cuda::memory_stats().in_use;
  {
    Tensor d = to_device(h, Device::CUDA);
    EXPECT_EQ(d.device, Device::CUDA);
    EXPECT_GE(cuda::memory_stats().in_use, before + h.nbytes());
    Tensor back = to_device(d, Device::CPU);
    EXPECT_EQ(0, std::memcmp(back.data, h.data, h.nbytes()));
    Tensor z = zeros(DType::F32, {513}, Device::CUDA);
    Tensor zb = to_device(z, Device::CPU);
    for (int i = 0; i < 513; ++i) ASSERT_EQ(zb.ptr<float>()[i], 0.0f);
  }
  EXPECT_EQ(cuda::memory_stats().in_use, before);  // freed on release
  EXPECT_GE(cuda::memory_stats().peak_in_use, before + h.nbytes());
  EXPECT_NE(cuda::peak_memory_line().find("peak GPU memory"), std::string::npos);
#endif
}

TEST(CudaRuntime, RefusesGpusTheKernelsWereNotBuiltFor) {
#ifdef TF_HAVE_CUDA
  // runs without a GPU: the check is on the device's name and compute capability
  std::string a100 = cuda::unsupported_gpu_reason("NVIDIA A100-SXM4-80GB", 8, 0);
  EXPECT_NE(a100.find("NVIDIA A100-SXM4-80GB (sm_80)"), std::string::npos) << a100;
  EXPECT_NE(a100.find("--device cpu"), std::string::npos) << a100;
  EXPECT_FALSE(cuda::unsupported_gpu_reason("NVIDIA B200", 10, 0).empty());  // sm_90a code does not run there
  EXPECT_TRUE(cuda::unsupported_gpu_reason("NVIDIA H200", 9, 0).empty());
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(CudaRuntime, OutOfMemoryNamesTheBytes) {
  TF_REQUIRE_CUDA_GPU();
  try {
    Tensor huge = empty(DType::F32, {int64_t(1) << 40}, Device::CUDA);
    FAIL() << "a 4 TiB allocation succeeded";
  } catch (const OutOfMemory& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("asked for"), std::string::npos) << m;
    EXPECT_NE(m.find("free"), std::string::npos) << m;
  }
  // the device still works afterwards
  Tensor ok = zeros(DType::F32, {16}, Device::CUDA);
  EXPECT_EQ(ok.device, Device::CUDA);
}

TEST(CudaRuntime, UploadMatchesHostBytes) {
  TF_REQUIRE_CUDA_GPU();
  // sizes around the staging chunk so partial chunks and many chunks are both exercised
  std::vector<Tensor> host = {random_bf16({3, 5}, 2), random_bf16({9000, 4096}, 3), random_bf16({1, 4097}, 4)};
  std::vector<Tensor> dev = host;
  std::vector<Tensor*> ptrs;
  for (Tensor& t : dev) ptrs.push_back(&t);
  UploadReport r = upload_tensors(ptrs, Device::CUDA, "test weights");
  size_t total = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    ASSERT_EQ(dev[i].device, Device::CUDA);
    Tensor back = to_device(dev[i], Device::CPU);
    EXPECT_EQ(0, std::memcmp(back.data, host[i].data, host[i].nbytes())) << "tensor " << i;
    total += host[i].nbytes();
  }
  EXPECT_EQ(r.bytes, total);
}

#ifdef TF_HAVE_CUDA
// y = x w^T against a float64 sum; the allowance is one bf16 rounding of the result plus the
// fp32 accumulation error bound k * 2^-24 * sum |x w|.
using GemmFn = void (*)(const void*, const void*, void*, int64_t, int64_t, int64_t);

void check_gemm(int64_t m, int64_t n, int64_t k, uint32_t seed, GemmFn gemm = cuda::gemm_bf16_xwt) {
  Tensor x = random_bf16({m, k}, seed), w = random_bf16({n, k}, seed + 1, 0.05f);
  Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
  Tensor dy = empty(DType::BF16, {m, n}, Device::CUDA), dy2 = empty(DType::BF16, {m, n}, Device::CUDA);
  gemm(dx.data, dw.data, dy.data, m, n, k);
  gemm(dx.data, dw.data, dy2.data, m, n, k);
  Tensor y = to_device(dy, Device::CPU), y2 = to_device(dy2, Device::CPU);
  ASSERT_EQ(0, std::memcmp(y.data, y2.data, y.nbytes())) << "repeat differs";
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, a = 0;
      for (int64_t t = 0; t < k; ++t) {
        double p = double(to_float(x.ptr<bf16>()[i * k + t])) * double(to_float(w.ptr<bf16>()[j * k + t]));
        s += p;
        a += std::fabs(p);
      }
      double got = to_float(y.ptr<bf16>()[i * n + j]);
      double allow = std::fabs(s) * std::ldexp(1.0, -8) + a * double(k) * std::ldexp(1.0, -24) + 1e-30;
      if (std::fabs(got - s) > allow && bad++ < 5)
        ADD_FAILURE() << "y[" << i << "," << j << "] = " << got << ", float64 " << s << " (allow " << allow << ")";
    }
  EXPECT_EQ(bad, 0) << "m=" << m << " n=" << n << " k=" << k;
}
#endif

TEST(CudaGemm, MatchesFloat64AndRepeatsExactly) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // the default path (cuBLASLt unless TF_GEMM=own)
  check_gemm(1, 64, 128, 10);
  check_gemm(10, 256, 512, 11);
  check_gemm(75, 96, 4096, 12);
  check_gemm(120, 96, 4096, 21);
  check_gemm(300, 130, 200, 13);
  check_gemm(75, 32, 4096, 14);
  // the own narrow kernel (opt-in)
  ASSERT_TRUE(cuda::gemm_small_n_fits(75, 32, 4096));
  check_gemm(75, 32, 4096, 14, cuda::gemm_small_n);
  check_gemm(200, 5, 12288, 15, cuda::gemm_small_n);
  // the own skinny tensor-core kernel (opt-in): every block width, 1 to 6 token tiles
  check_gemm(1, 1024, 4096, 16, cuda::gemm_skinny);
  check_gemm(17, 96, 512, 17, cuda::gemm_skinny);
  check_gemm(75, 4096, 256, 18, cuda::gemm_skinny);
  check_gemm(96, 8192, 128, 19, cuda::gemm_skinny);
  check_gemm(33, 2048, 1024, 20, cuda::gemm_skinny);
#endif
}

TEST(CudaGemm, PlantedFaultIsCaught) {
  TF_REQUIRE_CUDA_GPU();
#ifdef TF_HAVE_CUDA
  // swapping the operands' roles (x^T w) must not pass the same check: guard the check itself
  Tensor x = random_bf16({4, 64}, 20), w = random_bf16({4, 64}, 21);
  Tensor dx = to_device(x, Device::CUDA), dw = to_device(w, Device::CUDA);
  Tensor dy = empty(DType::BF16, {4, 4}, Device::CUDA);
  cuda::gemm_bf16_xwt(dw.data, dx.data, dy.data, 4, 4, 64);  // computes w x^T = (x w^T)^T
  Tensor y = to_device(dy, Device::CPU);
  int off = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int t = 0; t < 64; ++t) s += double(to_float(x.ptr<bf16>()[i * 64 + t])) * to_float(w.ptr<bf16>()[j * 64 + t]);
      if (std::fabs(to_float(y.ptr<bf16>()[i * 4 + j]) - s) > 0.05 * std::fabs(s) + 1e-3) ++off;
    }
  EXPECT_GT(off, 0);
#endif
}

}  // namespace
}  // namespace tf
