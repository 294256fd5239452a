#include "backend/elementwise/situ_gated_product.h"

#include "backend/device/dispatch.h"

namespace tf {

void situ_gated_product(const Tensor& up, const Tensor& gate, Tensor& y) {
  const char* op = "situ_gated_product";
  Device dev = common_device(op, {&up, &gate, &y});
  expect_elementwise(op, DType::BF16, {{"up", up}, {"gate", gate}, {"y", y}});
  run_kernel(op, dev, cpu::situ_gated_product, TF_CUDA_KERNEL(cuda::situ_gated_product), up, gate, y);
}

}  // namespace tf
