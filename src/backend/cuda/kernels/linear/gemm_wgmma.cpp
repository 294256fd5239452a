// The wgmma product's front: geometry, the Hopper check, SiTU's tables, then one epilogue's launch.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/elementwise/situ_tables.h"
#include "backend/cuda/kernels/linear/gemm_wgmma.h"

namespace tf::cuda {

namespace wgmma_product {
template <GemmEpilogue E>
void launch(const GemmWgmma&, const float*);
}  // namespace wgmma_product

namespace {

bool hopper() {
  static const bool yes = [] {
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    return major == 9 && minor == 0;
  }();
  return yes;
}

bool aligned(const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) % a) == 0; }

}  // namespace

bool gemm_wgmma_fits(const GemmWgmma& g) {
  constexpr int64_t kMax = int64_t(1) << 31;
  return hopper() && g.m > 0 && g.n > 0 && g.k > 0 && g.m < kMax && g.n < kMax && g.k < kMax && g.k % 8 == 0 &&
         g.n % 8 == 0 && aligned(g.x, 16) && aligned(g.w, 16) && (!g.w2 || aligned(g.w2, 16)) && aligned(g.y, 4) &&
         (!g.gate || aligned(g.gate, 4));
}

bool gemm_wgmma(GemmEpilogue e, const GemmWgmma& g) {
  switch (e) {
    case GemmEpilogue::store:
      wgmma_product::launch<GemmEpilogue::store>(g, nullptr);
      return true;
    case GemmEpilogue::gated_residual:
      wgmma_product::launch<GemmEpilogue::gated_residual>(g, nullptr);
      return true;
    case GemmEpilogue::situ: {
      const float* tables = situ_tables();
      if (!tables) return false;
      wgmma_product::launch<GemmEpilogue::situ>(g, tables);
      return true;
    }
  }
  return false;
}

}  // namespace tf::cuda
