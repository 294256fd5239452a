#include "backend/linear/linear_gated_product.h"

#include "backend/device/dispatch.h"
#include "backend/linear/linear.h"

namespace tf {

void linear_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, GatedActivation act, Tensor& y) {
  const char* op = "linear_gated_product";
  Device dev = common_device(op, {&x, &w_gate, &w_up, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"w_gate", w_gate}, {"w_up", w_up}, {"y", y}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [n, K]");
  if (w_gate.rank() != 2 || w_gate.dim(1) != x.dim(1))
    fail(std::string(op) + ": w_gate is " + w_gate.describe() + ", expected [N, " + std::to_string(x.dim(1)) +
         "] for x " + x.describe());
  expect_shape(op, "w_up", w_up, w_gate.shape);
  expect_shape(op, "y", y, {x.dim(0), w_gate.dim(0)});
  if (y.data == x.data && y.nbytes() > 0) fail(std::string(op) + ": y must not alias x");
  run_kernel(op, dev, cpu::linear_gated_product, TF_CUDA_KERNEL(cuda::linear_gated_product), x, w_gate, w_up, act, y);
}

}  // namespace tf
