#include "backend/linear.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/transformer_ops.h"
#endif

namespace tf {

void linear(const Tensor& x, const Tensor& w, Tensor& y) {
  const char* op = "linear";
  Device dev = common_device(op, {&x, &w, &y});
  expect_dtypes(op, DType::BF16, {{"x", x}, {"w", w}, {"y", y}});
  if (x.rank() != 2) fail(std::string(op) + ": x is " + x.describe() + ", expected [n, K]");
  if (w.rank() != 2 || w.dim(1) != x.dim(1))
    fail(std::string(op) + ": w is " + w.describe() + ", expected [N, " + std::to_string(x.dim(1)) + "] for x " +
         x.describe());
  expect_shape(op, "y", y, {x.dim(0), w.dim(0)});
  if (y.data == x.data && y.nbytes() > 0) fail(std::string(op) + ": y must not alias x");
  run_kernel(op, dev, cpu::linear, TF_CUDA_KERNEL(cuda::linear), x, w, y);
}

}  // namespace tf
