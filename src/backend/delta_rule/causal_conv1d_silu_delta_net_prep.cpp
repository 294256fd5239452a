#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"

#include "backend/delta_rule/delta_net_prep.h"
#include "backend/device/dispatch.h"

namespace tf {

void causal_conv1d_silu_delta_net_prep(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets,
                                       const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                                       Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  const char* op = "causal_conv1d_silu_delta_net_prep";
  Device dev = check_delta_net_prep(op, "x", x, b, a, A_log, dt_bias, q, k, v, beta, g);
  common_device(op, {&x, &w});
  expect_dtypes(op, DType::BF16, {{"w", w}});
  if (w.rank() != 3 || w.dim(0) != x.dim(1) || w.dim(1) != 1 || w.dim(2) < 1)
    fail(std::string(op) + ": w is " + w.describe() + ", expected [" + std::to_string(x.dim(1)) + ", 1, K]");
  check_seq_offsets(op, seq_offsets, x.dim(0));
  run_kernel(op, dev, cpu::causal_conv1d_silu_delta_net_prep, TF_CUDA_KERNEL(cuda::causal_conv1d_silu_delta_net_prep),
             x, w, seq_offsets, b, a, A_log, dt_bias, q, k, v, beta, g);
}

}  // namespace tf
