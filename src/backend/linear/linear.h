#pragma once
// Linear layer without bias, as torch's bf16 nn.Linear: y[t, o] = bf16(sum_k float(x[t, k]) * float(w[o, k])).
// Each sum is one fp32 accumulation over k in a fixed order (16 interleaved partial sums,
// lane j takes k = j mod 16 in increasing k, combined by a fixed pairwise tree); every product of
// two bf16 values is exact in fp32, so fused multiply-add changes nothing. One rounding at the end.
// w is read in place (on the CPU: straight from the mapped checkpoint).
#include <cstdint>
#include <initializer_list>
#include <span>

#include "backend/norm/rms_norm.h"
#include "core/tensor.h"

namespace tf {

// Up to this many rows a row's sums do not depend on the row count on any backend, so prompts
// packed into one forward of at most this many rows get their own bytes (more rows change the
// CUDA product's kernel).
constexpr int64_t kLinearPackedRows = 128;

// One weight of a group of linear layers that read the same x: w [N, K], y [n, N].
struct LinearPart {
  const Tensor* w;
  Tensor* y;
};

// x: BF16 [n, K]; w: BF16 [N, K]; y: BF16 [n, N] (must not alias x).
// Or y: F32 [P, n, N], the product left as k-share sums for its consumer to finish: y[p] is the fp32
// sum over the p-th of P equal k ranges (the same fp32 accumulation, no rounding), and the product
// is bf16(((y[0] + y[1]) + ...) + y[P - 1]), added in share order (residual_add and
// residual_add_rms_norm take such y as their d). P is the device's: on CUDA
// linear_k_shares(...); the CPU takes any P that divides K.
void linear(const Tensor& x, const Tensor& w, Tensor& y);

// The k shares the device's linear offers for n rows of x [n, K] against w [N, K], 0 for none (the
// CPU; CUDA where one share a tile already fills the GPU, or above kLinearPackedRows rows). Fixed by
// K and N, never by n, so a row's bytes stay independent of the rows packed with it.
int64_t linear_k_shares(Device d, int64_t n, int64_t K, int64_t N);

// y_i = x w_i^T for each part, with linear's numerics; on CUDA one launch streams all the weights.
void linear_shared_input(const Tensor& x, std::initializer_list<LinearPart> parts);

// What happens to a product's fp32 sums s = x w^T on their way out, each step as torch's bf16 ops round:
//   bias:      y = bf16(s + float(b))   (b BF16 or F32 [N]; one rounding) — else y = bf16(s)
//   residual:  h = bf16(float(h) + float(y))  in place (y itself is not kept); with gate (BF16 [N]):
//              h = bf16(float(h) + float(y) * float(gate))  (y the product's bf16; one rounding, no fma)
//   norm:      after the residual add, norm_out = rms_norm(h, norm_weight, norm) (residual_add_rms_norm's bytes);
//              with shift and scale (norm.weight plain) the modulated norm, rms_norm_modulate(h, norm_weight,
//              norm.eps, shift, scale) (with gate: residual_add_rms_norm_modulate's bytes)
// A residual product without bias or gate leaves the device's k-share sums to the add (linear_k_shares),
// so the family never sees them.
struct LinearEpilogue {
  const Tensor* bias = nullptr;
  Tensor* residual = nullptr;
  const Tensor* gate = nullptr;
  const Tensor* norm_weight = nullptr;
  RmsNormOptions norm{};
  Tensor* norm_out = nullptr;
  const Tensor* shift = nullptr;
  const Tensor* scale = nullptr;
};

// y = x w^T with the epilogue's bias (y: BF16 [n, N]); e.residual must be null.
void linear(const Tensor& x, const Tensor& w, Tensor& y, const LinearEpilogue& e);
// The residual forms: e.residual (BF16 [n, N]) takes the product; nothing else is written but norm_out.
void linear(const Tensor& x, const Tensor& w, const LinearEpilogue& e);

// The kernels behind the ops; the fronts check geometry, so they trust their arguments.
namespace cpu {
void linear(const Tensor& x, const Tensor& w, Tensor& y);
void linear_bias(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y);
// h = residual_add(h, linear(x, w), &gate): the two steps' bytes (on CUDA, one launch where it can).
void linear_gated_residual(const Tensor& x, const Tensor& w, const Tensor& gate, Tensor& h);
int64_t linear_k_shares(int64_t n, int64_t K, int64_t N);
void linear_shared_input(const Tensor& x, std::span<const LinearPart> parts);
// Which linear kernel runs (TF_CPU_LINEAR, backend/variants.h): the widest the machine has, or a
// narrower one asked for. All give the same bytes.
enum class LinearKernel { Auto, Scalar, Avx2, Avx512 };
LinearKernel linear_kernel_in_use();
const char* linear_kernel_name(LinearKernel k);
}  // namespace cpu
namespace cuda {
void linear(const Tensor& x, const Tensor& w, Tensor& y);
void linear_bias(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y);
void linear_gated_residual(const Tensor& x, const Tensor& w, const Tensor& gate, Tensor& h);
int64_t linear_k_shares(int64_t n, int64_t K, int64_t N);
void linear_shared_input(const Tensor& x, std::span<const LinearPart> parts);
}  // namespace cuda

}  // namespace tf
