#include "backend/attention/split_query_gate.h"

#include "backend/device/dispatch.h"

namespace tf {

void split_query_gate(const Tensor& qg, Tensor& query, Tensor& gate) {
  const char* op = "split_query_gate";
  Device dev = common_device(op, {&qg, &query, &gate});
  expect_dtypes(op, DType::BF16, {{"qg", qg}, {"query", query}, {"gate", gate}});
  if (query.rank() != 3) fail(std::string(op) + ": query is " + query.describe() + ", expected [T, heads, head_dim]");
  expect_shape(op, "gate", gate, query.shape);
  expect_shape(op, "qg", qg, {query.dim(0), query.dim(1) * 2 * query.dim(2)});
  run_kernel(op, dev, cpu::split_query_gate, TF_CUDA_KERNEL(cuda::split_query_gate), qg, query, gate);
}

}  // namespace tf
