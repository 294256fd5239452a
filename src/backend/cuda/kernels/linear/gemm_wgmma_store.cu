// gemm_wgmma.cuh's store epilogue, instantiated once.
#include "backend/cuda/kernels/linear/gemm_wgmma_launch.cuh"

namespace tf::cuda::wgmma_product {
template void launch<GemmEpilogue::store>(const GemmWgmma&, const float*);
}  // namespace tf::cuda::wgmma_product
