#include "backend/delta_net_prep.h"

#include "backend/cpu/transformer_ops.h"
#include "backend/dispatch.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/transformer_ops.h"
#endif

namespace tf {

void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g) {
  const char* op = "delta_net_prep";
  Device dev = common_device(op, {&mixed, &b, &a, &A_log, &dt_bias, &q, &k, &v, &beta, &g});
  expect_dtype(op, "mixed", mixed, DType::BF16);
  expect_dtype(op, "b", b, DType::BF16);
  expect_dtype(op, "a", a, DType::BF16);
  for (auto [name, t] : {std::pair<const char*, const Tensor*>{"A_log", &A_log}, {"dt_bias", &dt_bias}})
    if (t->dtype != DType::BF16 && t->dtype != DType::F32)
      fail(std::string(op) + ": " + name + " is " + t->describe() + ", expected BF16 or F32");
  for (auto [name, t] : {std::pair<const char*, const Tensor*>{"q", &q}, {"k", &k}, {"v", &v}, {"beta", &beta}, {"g", &g}})
    expect_dtype(op, name, *t, DType::F32);
  if (q.rank() != 3) fail(std::string(op) + ": q is " + q.describe() + ", expected [T, Hk, dk]");
  if (v.rank() != 3) fail(std::string(op) + ": v is " + v.describe() + ", expected [T, Hv, dv]");
  int64_t T = q.dim(0), Hk = q.dim(1), dk = q.dim(2), Hv = v.dim(1), dv = v.dim(2);
  expect_shape(op, "k", k, q.shape);
  expect_shape(op, "v", v, {T, Hv, dv});
  expect_shape(op, "mixed", mixed, {T, 2 * Hk * dk + Hv * dv});
  expect_shape(op, "b", b, {T, Hv});
  expect_shape(op, "a", a, {T, Hv});
  expect_shape(op, "A_log", A_log, {Hv});
  expect_shape(op, "dt_bias", dt_bias, {Hv});
  expect_shape(op, "beta", beta, {T, Hv});
  expect_shape(op, "g", g, {T, Hv});
  if (dev == Device::CPU) return cpu::delta_net_prep(mixed, b, a, A_log, dt_bias, q, k, v, beta, g);
#ifdef TF_HAVE_CUDA
  return cuda::delta_net_prep(mixed, b, a, A_log, dt_bias, q, k, v, beta, g);
#else
  no_cuda(op);
#endif
}

}  // namespace tf
