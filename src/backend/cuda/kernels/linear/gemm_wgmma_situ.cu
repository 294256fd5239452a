// gemm_wgmma.cuh's situ epilogue, instantiated once.
#include "backend/cuda/kernels/linear/gemm_wgmma_launch.cuh"

namespace tf::cuda::wgmma_product {
template void launch<GemmEpilogue::situ>(const GemmWgmma&, const float*);
}  // namespace tf::cuda::wgmma_product
