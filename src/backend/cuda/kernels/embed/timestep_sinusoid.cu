// timestep_sinusoid on CUDA: a thread per (row, k), float64 as the reference, then f64 -> f32 -> bf16.
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/embed/timestep_sinusoid.h"

namespace tf::cuda {

namespace {

__global__ void timestep_sinusoid_kernel(const float* sigma, float scale, double max_period, uint16_t* e, int64_t n,
                                         int half) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n * half) return;
  const int64_t r = i / half;
  const int k = static_cast<int>(i % half);
  const float t = __fmul_rn(sigma[r], scale);
  const double phase = static_cast<double>(t) * pow(max_period, -static_cast<double>(k) / static_cast<double>(half));
  e[r * 2 * half + k] = st_bf16(static_cast<float>(cos(phase)));
  e[r * 2 * half + half + k] = st_bf16(static_cast<float>(sin(phase)));
}

}  // namespace

void timestep_sinusoid(const Tensor& sigma, float scale, double max_period, Tensor& e) {
  const int64_t n = sigma.dim(0);
  const int half = static_cast<int>(e.dim(1) / 2);
  if (n == 0) return;
  timestep_sinusoid_kernel<<<blocks_for(n * half, 128), 128, 0, stream()>>>(sigma.ptr<const float>(), scale, max_period,
                                                                           static_cast<uint16_t*>(e.data), n, half);
  TF_CUDA_LAUNCH("timestep_sinusoid_kernel");
}

}  // namespace tf::cuda
