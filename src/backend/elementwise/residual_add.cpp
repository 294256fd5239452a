#include "backend/elementwise/residual_add.h"

#include "backend/device/dispatch.h"

namespace tf {

void check_residual_delta(const char* op, const Tensor& h, const Tensor& d) {
  expect_dtype(op, "h", h, DType::BF16);
  if (d.dtype != DType::F32) return expect_elementwise(op, DType::BF16, {{"h", h}, {"d", d}});
  if (h.rank() != 2 || d.rank() != 3 || d.dim(0) < 1 || d.dim(1) != h.dim(0) || d.dim(2) != h.dim(1))
    fail(std::string(op) + ": d is " + d.describe() + ", expected BF16 of h's shape or F32 [P, rows, n] k-share sums for h " +
         h.describe());
}

void residual_add(Tensor& h, const Tensor& d, const Tensor* gate) {
  const char* op = "residual_add";
  Device dev = common_device(op, {&h, &d});
  check_residual_delta(op, h, d);
  if (gate) {
    common_device(op, {&h, gate});
    expect_dtypes(op, DType::BF16, {{"d", d}, {"gate", *gate}});
    expect_shape(op, "gate", *gate, {h.shape.back()});
    return run_kernel("residual_add (gated)", dev, cpu::residual_add_gated, TF_CUDA_KERNEL(cuda::residual_add_gated), h, d, *gate);
  }
  run_kernel(op, dev, cpu::residual_add, TF_CUDA_KERNEL(cuda::residual_add), h, d);
}

}  // namespace tf
