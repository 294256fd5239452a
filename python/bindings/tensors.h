#pragma once
// Tensors across the boundary by DLPack: inputs borrowed without a copy (exact dtype, C-contiguous,
// on the CPU, or a ValueError naming the argument; never converted), outputs handed over as arrays
// that own the engine's storage (no copy; freed when the last Python reference goes).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

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

// A CPU tensor as a Python array sharing its storage (a borrowed view is copied first).
nb::object to_python(const tf::Tensor& t, Framework f);

// `a` as an engine tensor viewing its memory. Refuses (BadInput, naming `name`) another dtype, a
// rank other than `rank`, non-contiguous strides, or memory not on the CPU.
tf::Tensor borrow(const Input& a, const std::string& name, tf::DType dtype, int rank);

// Image b of a [B, ...] tensor: a view of its bytes.
tf::Tensor item(const tf::Tensor& batch, int64_t b);

}  // namespace tfpy
