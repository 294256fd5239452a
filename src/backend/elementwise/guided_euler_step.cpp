#include "backend/elementwise/guided_euler_step.h"

#include "backend/device/dispatch.h"

namespace tf {

void guided_euler_step(Tensor& x, const Tensor& cond, const Tensor* uncond, const Tensor& scalars) {
  const char* op = "guided_euler_step";
  const Device dev = common_device(op, {&x, &cond, &scalars});
  if (uncond) common_device(op, {&x, uncond});
  expect_dtype(op, "x", x, DType::F32);
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected F32 [C, n]");
  expect_dtype(op, "cond", cond, DType::BF16);
  expect_shape(op, "cond", cond, {x.dim(1), x.dim(0)});
  if (uncond) {
    expect_dtype(op, "uncond", *uncond, DType::BF16);
    expect_shape(op, "uncond", *uncond, {x.dim(1), x.dim(0)});
  }
  expect_dtype(op, "scalars", scalars, DType::F32);
  expect_shape(op, "scalars", scalars, {3});
  run_kernel(op, dev, cpu::guided_euler_step, TF_CUDA_KERNEL(cuda::guided_euler_step), x, cond, uncond, scalars);
}

}  // namespace tf
