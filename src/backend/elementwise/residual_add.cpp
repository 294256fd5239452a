#include "backend/elementwise/residual_add.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/device/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/kernels/transformer_ops.h"
#endif

namespace tf {

void check_residual_delta(const char* op, const Tensor& h, const Tensor& d) {
  expect_dtype(op, "h", h, DType::BF16);
  if (d.dtype != DType::F32) return expect_elementwise(op, DType::BF16, {{"h", h}, {"d", d}});
  if (h.rank() != 2 || d.rank() != 3 || d.dim(0) < 1 || d.dim(1) != h.dim(0) || d.dim(2) != h.dim(1))
    fail(std::string(op) + ": d is " + d.describe() + ", expected BF16 of h's shape or F32 [P, rows, n] k-share sums for h " +
         h.describe());
}

void residual_add(Tensor& h, const Tensor& d) {
  const char* op = "residual_add";
  Device dev = common_device(op, {&h, &d});
  check_residual_delta(op, h, d);
  run_kernel(op, dev, cpu::residual_add, TF_CUDA_KERNEL(cuda::residual_add), h, d);
}

}  // namespace tf
