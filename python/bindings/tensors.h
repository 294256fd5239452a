#pragma once
// Tensors across the boundary by DLPack: inputs borrowed without a copy (exact dtype, C-contiguous,
// in host memory or, for an engine on CUDA, in its GPU's memory, or a ValueError naming the argument;
// never converted), outputs handed over as arrays that own the engine's storage (no copy; freed when
// the last Python reference goes). Work on GPU memory is ordered against the caller's stream.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace tfpy {

namespace nb = nanobind;

// Inputs: any DLPack or buffer-protocol array, read-only ones included (the engine never writes them).
using Input = nb::ndarray<nb::ro>;

// What outputs are: torch tensors, numpy arrays (bf16 as uint16 bit patterns: numpy has no
// bfloat16), or framework-free arrays with __dlpack__ (nanobind's array_api objects).
enum class Framework { Torch, NumPy, DLPack };
Framework framework_from(const std::string& name);

// A tensor as a Python array sharing its storage (a borrowed view is copied first). A CUDA tensor
// becomes a CUDA array whose memory, once Python lets it go, returns to the engine's pool only after
// the work `stream` (the caller's, a cudaStream_t as an integer) held by then.
nb::object to_python(const tf::Tensor& t, Framework f, uintptr_t stream = 0);

// `a` as an engine tensor viewing its memory. Refuses (BadInput, naming `name`) another dtype, a
// rank other than `rank`, non-contiguous strides, or memory the engine cannot read: host memory
// always, GPU memory (device 0) only where `engine` is CUDA.
tf::Tensor borrow(const Input& a, const std::string& name, tf::DType dtype, int rank,
                  tf::Device engine = tf::Device::CPU);

// f() with the engine's stream ordered after the caller's `stream` and the caller's after the
// engine's work (both without waiting on the host) where `on_gpu`; plain f() otherwise.
template <class F>
auto on_caller_stream(bool on_gpu, uintptr_t stream, F&& f);

// Image b of a [B, ...] tensor: a view of its bytes.
tf::Tensor item(const tf::Tensor& batch, int64_t b);

void engine_waits_for_caller(uintptr_t stream);
void caller_waits_for_engine(uintptr_t stream);

template <class F>
auto on_caller_stream(bool on_gpu, uintptr_t stream, F&& f) {
  if (!on_gpu) return f();
  engine_waits_for_caller(stream);
  auto out = f();
  caller_waits_for_engine(stream);
  return out;
}

}  // namespace tfpy
