#include "backend/delta_rule/delta_net_prep.h"

#include "backend/device/dispatch.h"

namespace tf {

Device check_delta_net_prep(const char* op, const char* input, const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                            const Tensor& dt_bias, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& beta, const Tensor& g) {
  Device dev = common_device(op, {&mixed, &b, &a, &A_log, &dt_bias, &q, &k, &v, &beta, &g});
  expect_dtypes(op, DType::BF16, {{input, mixed}, {"b", b}, {"a", a}});
  expect_bf16_or_f32(op, "A_log", A_log);
  expect_bf16_or_f32(op, "dt_bias", dt_bias);
  expect_dtypes(op, DType::F32, {{"q", q}, {"k", k}, {"v", v}, {"beta", beta}, {"g", g}});
  if (q.rank() != 3) fail(std::string(op) + ": q is " + q.describe() + ", expected [T, Hk, dk]");
  if (v.rank() != 3) fail(std::string(op) + ": v is " + v.describe() + ", expected [T, Hv, dv]");
  int64_t T = q.dim(0), Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  expect_shape(op, "k", k, q.shape);
  expect_shape(op, "v", v, {T, Hv, dv});
  expect_shape(op, input, mixed, {T, 2 * Hk * dk + Hv * dv});
  expect_shapes(op, {T, Hv}, {{"b", b}, {"a", a}});
  expect_shapes(op, {Hv}, {{"A_log", A_log}, {"dt_bias", dt_bias}});
  expect_shapes(op, {T, Hv}, {{"beta", beta}, {"g", g}});
  return dev;
}

void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  const char* op = "delta_net_prep";
  Device dev = check_delta_net_prep(op, "mixed", mixed, b, a, A_log, dt_bias, q, k, v, beta, g);
  run_kernel(op, dev, cpu::delta_net_prep, TF_CUDA_KERNEL(cuda::delta_net_prep),
             mixed, b, a, A_log, dt_bias, q, k, v, beta, g);
}

}  // namespace tf
