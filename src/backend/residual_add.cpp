#include "backend/residual_add.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/transformer_ops.h"
#endif

namespace tf {

void residual_add(Tensor& h, const Tensor& d) {
  const char* op = "residual_add";
  Device dev = common_device(op, {&h, &d});
  expect_elementwise(op, DType::BF16, {{"h", h}, {"d", d}});
  run_kernel(op, dev, cpu::residual_add, TF_CUDA_KERNEL(cuda::residual_add), h, d);
}

}  // namespace tf
