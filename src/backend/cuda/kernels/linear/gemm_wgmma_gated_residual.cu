// gemm_wgmma.cuh's gated_residual epilogue, instantiated once.
#include "backend/cuda/kernels/linear/gemm_wgmma_launch.cuh"

namespace tf::cuda::wgmma_product {
template void launch<GemmEpilogue::gated_residual>(const GemmWgmma&, const float*);
}  // namespace tf::cuda::wgmma_product
