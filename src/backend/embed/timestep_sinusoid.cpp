#include "backend/embed/timestep_sinusoid.h"

#include "backend/device/dispatch.h"

namespace tf {

void timestep_sinusoid(const Tensor& sigma, const SinusoidOptions& o, Tensor& e) {
  const char* op = "timestep_sinusoid";
  Device dev = common_device(op, {&sigma, &e});
  expect_dtype(op, "sigma", sigma, DType::F32);
  expect_dtype(op, "e", e, DType::BF16);
  if (sigma.rank() != 1) fail(std::string(op) + ": sigma is " + sigma.describe() + ", expected [n]");
  if (e.rank() != 2 || e.dim(0) != sigma.dim(0) || e.dim(1) < 2 || e.dim(1) % 2)
    fail(std::string(op) + ": e is " + e.describe() + ", expected [" + std::to_string(sigma.dim(0)) +
         ", dim] with dim even and at least 2");
  run_kernel(op, dev, cpu::timestep_sinusoid, TF_CUDA_KERNEL(cuda::timestep_sinusoid), sigma, o.scale, o.max_period, e);
}

}  // namespace tf
