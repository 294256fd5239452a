#include "backend/elementwise/sigmoid_gate.h"

#include "backend/device/dispatch.h"

namespace tf {

void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y) {
  const char* op = "sigmoid_gate";
  Device dev = common_device(op, {&x, &gate, &y});
  expect_elementwise(op, DType::BF16, {{"x", x}, {"gate", gate}, {"y", y}});
  run_kernel(op, dev, cpu::sigmoid_gate, TF_CUDA_KERNEL(cuda::sigmoid_gate), x, gate, y);
}

}  // namespace tf
