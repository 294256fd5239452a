#pragma once
// How an op is laid out (ggml/MLX style): declared once in backend/<subject>/<op>.h as a free function
// on tensors, its cpu:: and cuda:: kernels declared beside it; backend/<subject>/<op>.cpp checks
// geometry and dispatches by device (run_kernel) to cpu::<op> (backend/cpu/) or cuda::<op>
// (backend/cuda/kernels/<subject>/). Families call only the op's header (docs/adding-an-op.md).
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "core/tensor.h"

namespace tf {

// The one device all of an op's tensors live on; mixing devices is a caller's error.
inline Device common_device(const char* op, std::initializer_list<const Tensor*> ts) {
  Device d = (*ts.begin())->device;
  for (const Tensor* t : ts)
    if (t->device != d) fail(std::string(op) + ": tensors on different devices (" + t->describe() + ")");
  return d;
}

inline void expect_dtype(const char* op, const char* arg, const Tensor& t, DType want) {
  if (t.dtype != want)
    fail(std::string(op) + ": " + arg + " is " + t.describe() + ", expected " + std::string(dtype_name(want)));
}

// Weights the checkpoint may store in either precision.
inline void expect_bf16_or_f32(const char* op, const char* arg, const Tensor& t) {
  if (t.dtype != DType::BF16 && t.dtype != DType::F32)
    fail(std::string(op) + ": " + arg + " is " + t.describe() + ", expected BF16 or F32");
}

inline void expect_shape(const char* op, const char* arg, const Tensor& t, const Shape& want) {
  if (t.shape != want) fail(std::string(op) + ": " + arg + " is " + t.describe() + ", expected shape " + shape_str(want));
}

// One argument of an op, as its errors name it.
struct NamedTensor {
  const char* name;
  const Tensor& t;
};

// Each of ts has dtype want; the first that does not is the error.
inline void expect_dtypes(const char* op, DType want, std::initializer_list<NamedTensor> ts) {
  for (const NamedTensor& a : ts) expect_dtype(op, a.name, a.t, want);
}

// Each of ts has shape want; the first that does not is the error.
inline void expect_shapes(const char* op, const Shape& want, std::initializer_list<NamedTensor> ts) {
  for (const NamedTensor& a : ts) expect_shape(op, a.name, a.t, want);
}

// An element-wise op's arguments: all of dtype want (checked first, in order), then every one
// shaped like the first.
inline void expect_elementwise(const char* op, DType want, std::initializer_list<NamedTensor> ts) {
  expect_dtypes(op, want, ts);
  const Shape& shape = ts.begin()->t.shape;
  for (const NamedTensor& a : ts) expect_shape(op, a.name, a.t, shape);
}

[[noreturn]] inline void no_cuda(const char* op) {
#ifdef TF_HAVE_CUDA
  fail(std::string(op) + ": no CUDA kernel for this variant yet (use --device cpu)");
#else
  fail(std::string(op) + ": this build has no CUDA backend (use --device cpu)");
#endif
}

// An op's CUDA kernel for run_kernel: nullptr in a build without CUDA, where cuda::<op> does not exist.
#ifdef TF_HAVE_CUDA
#define TF_CUDA_KERNEL(kernel) (&kernel)
#else
#define TF_CUDA_KERNEL(kernel) nullptr
#endif

// Runs an op on the device its tensors live on: cpu_kernel on the CPU, cuda_kernel on CUDA;
// without a CUDA kernel (a build without CUDA, or a variant CUDA lacks) CUDA tensors are refused by name.
template <class Kernel, class... Args>
void run_kernel(const char* op, Device d, Kernel cpu_kernel, std::type_identity_t<Kernel> cuda_kernel, Args&&... args) {
  if (d == Device::CPU) return cpu_kernel(std::forward<Args>(args)...);
  if (d == Device::CUDA && cuda_kernel) return cuda_kernel(std::forward<Args>(args)...);
  no_cuda(op);
}

}  // namespace tf
