#pragma once
// Shared pieces of the kernels' contract files: backends, case building, control helpers.
#include <functional>
#include <string>
#include <vector>

#include "check/contract/inputs.h"
#include "check/contract/kernel_contract.h"

namespace tf::contract {

// The CPU backend always; CUDA where this build has it and the op has a CUDA kernel.
std::vector<Device> backends(bool cuda_kernel_exists);

// A control that runs the real kernel on perturbed copies of the inputs.
Control perturbed_inputs(std::string name, std::function<void(std::vector<Tensor>& in)> perturb);
// A control that runs the real kernel and then perturbs its outputs.
Control perturbed_outputs(std::string name, std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out)> perturb);
// A control that runs the real kernel with changed scalar arguments.
Control perturbed_params(std::string name, std::function<void(Params& p)> perturb);
// A control that replaces the kernel with a faulty host re-implementation.
using HostKernel = std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p)>;
Control reimplemented(std::string name, HostKernel faulty);
// The control as a fault of the CPU backend only (CUDA declares that variant as its numerics).
Control cpu_only(Control c);

// Host copies of tensors (fresh storage).
std::vector<Tensor> copies(const std::vector<Tensor>& ts);
// Applies f to every value of a host tensor, storing the result rounded to its dtype.
void map_values(Tensor& t, const std::function<double(double)>& f);
// Stores a Reference's values (rounded to each output's dtype) into host outputs.
void store_reference(const Reference& ref, std::vector<Tensor>& out);
// A reference output of tracked values from a vector.
inline std::vector<Tracked> as_output(std::vector<Tracked> v) { return v; }

// A tensor that only describes a dtype and shape (gate 5's sizes: the runner allocates it on the device).
Tensor shape_only(DType t, Shape s);

std::string label(std::initializer_list<std::pair<const char*, int64_t>> dims);

}  // namespace tf::contract
