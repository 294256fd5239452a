#include "backend/elementwise/silu_gated_product.h"

#include "backend/device/dispatch.h"

namespace tf {

void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y) {
  const char* op = "silu_gated_product";
  Device dev = common_device(op, {&gate, &up, &y});
  expect_elementwise(op, DType::BF16, {{"gate", gate}, {"up", up}, {"y", y}});
  run_kernel(op, dev, cpu::silu_gated_product, TF_CUDA_KERNEL(cuda::silu_gated_product), gate, up, y);
}

}  // namespace tf
