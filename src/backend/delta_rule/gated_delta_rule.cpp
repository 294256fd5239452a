#include "backend/delta_rule/gated_delta_rule.h"

#include "backend/device/dispatch.h"

namespace tf {

namespace {

// Both forms share the geometry checks; returns the device the tensors live on.
Device check_geometry(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                      const Tensor& g, const SeqOffsets& seq_offsets, const Tensor& o) {
  Device dev = common_device(op, {&q, &k, &v, &beta, &g, &o});
  expect_dtypes(op, DType::F32, {{"q", q}, {"k", k}, {"v", v}, {"beta", beta}, {"g", g}});
  expect_dtype(op, "o", o, DType::BF16);
  if (q.rank() != 3) fail(std::string(op) + ": q is " + q.describe() + ", expected [T, Hk, dk]");
  if (v.rank() != 3) fail(std::string(op) + ": v is " + v.describe() + ", expected [T, Hv, dv]");
  int64_t T = q.dim(0), Hk = q.dim(1), Hv = v.dim(1);
  expect_shape(op, "k", k, q.shape);
  if (v.dim(0) != T) fail(std::string(op) + ": v is " + v.describe() + ", expected " + std::to_string(T) + " tokens");
  if (Hk < 1 || Hv % Hk != 0)
    fail(std::string(op) + ": value heads (" + std::to_string(Hv) + ") must be a multiple of key heads (" +
         std::to_string(Hk) + ")");
  expect_shapes(op, {T, Hv}, {{"beta", beta}, {"g", g}});
  expect_shape(op, "o", o, v.shape);
  check_seq_offsets(op, seq_offsets, T);
  return dev;
}

}  // namespace

void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o) {
  const char* op = "gated_delta_rule";
  Device dev = check_geometry(op, q, k, v, beta, g, seq_offsets, o);
  run_kernel(op, dev, cpu::gated_delta_rule, TF_CUDA_KERNEL(cuda::gated_delta_rule), q, k, v, beta, g, seq_offsets, o);
}

void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o) {
  const char* op = "gated_delta_rule_chunked";
  Device dev = check_geometry(op, q, k, v, beta, g, seq_offsets, o);
  run_kernel(op, dev, cpu::gated_delta_rule_chunked, TF_CUDA_KERNEL(cuda::gated_delta_rule_chunked), q, k, v, beta, g,
             seq_offsets, o);
}

}  // namespace tf
