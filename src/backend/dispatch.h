#pragma once
// How an op is laid out (ggml/MLX style): declared once in backend/<op>.h as a free function on
// tensors; backend/<op>.cpp checks geometry and dispatches by device to cpu::<op>
// (backend/cpu/<op>.cpp) or cuda::<op> (backend/cuda/<op>.cu). Families call only backend/<op>.h.
#include <initializer_list>
#include <string>

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

inline void expect_shape(const char* op, const char* arg, const Tensor& t, const Shape& want) {
  if (t.shape != want) fail(std::string(op) + ": " + arg + " is " + t.describe() + ", expected shape " + shape_str(want));
}

[[noreturn]] inline void no_cuda(const char* op) {
  fail(std::string(op) + ": this build has no CUDA backend (use --device cpu)");
}

}  // namespace tf
