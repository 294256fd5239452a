#include "backend/sigmoid_gate.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/transformer_ops.h"
#endif

namespace tf {

void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y) {
  const char* op = "sigmoid_gate";
  Device dev = common_device(op, {&x, &gate, &y});
  expect_elementwise(op, DType::BF16, {{"x", x}, {"gate", gate}, {"y", y}});
  if (dev == Device::CPU) return cpu::sigmoid_gate(x, gate, y);
#ifdef TF_HAVE_CUDA
  return cuda::sigmoid_gate(x, gate, y);
#else
  no_cuda(op);
#endif
}

}  // namespace tf
