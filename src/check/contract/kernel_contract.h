#pragma once
// What a kernel registers with the contract: how to make its inputs, its float64 reference with the
// rounding model's allowance, how to run it on a backend, and its planted faults (controls).
#include <functional>
#include <string>
#include <vector>

#include "check/contract/tracked.h"
#include "core/tensor.h"

namespace tf::contract {

// One problem: host input tensors and host output tensors of the shapes and dtypes the kernel
// writes (their contents are overwritten).
// Scalar arguments of an op (eps, scale, stride, groups, ...), in the order its contract defines.
using Params = std::vector<double>;

struct Case {
  std::string label;  // "tokens=65 in=96 out=40"
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  Params params;
};

// The reference for a case: per output tensor, per element, value and allowance.
using Reference = std::vector<std::vector<Tracked>>;

// Runs a kernel on tensors of one device (inputs and outputs share it).
using RunFn = std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p)>;

// Runs the real kernel on host tensors (copying to and from the backend under test).
using HostRun = std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p)>;

// A planted fault: a faulty variant that computes host outputs from host inputs; `real` runs the
// kernel under test, so a control may perturb the real kernel's inputs or outputs the way the
// fault would, or re-implement the kernel with the fault.
struct Control {
  std::string name;  // "dropped-output-rounding"
  std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, const HostRun& real)> run;
  // Where the variant is a fault (empty: every backend); a variant that is another backend's
  // declared numerics is no fault there.
  std::vector<Device> only_on;
};

class Rng;

struct KernelContract {
  std::string name;                    // the op's name, e.g. "rms_norm_one_plus"
  std::vector<std::string> families;   // "moss_image", "flux2_vae"
  std::vector<Device> backends;        // where the op exists in this build
  std::function<std::vector<Case>(Rng&)> random_cases;       // gate 2: several sizes
  std::function<std::vector<Case>(Rng&)> adversarial_cases;  // gate 4
  std::function<Reference(const Case&)> reference;
  // The CUDA kernel's own rounding model, where the op's header declares numerics for CUDA that
  // differ from the CPU's (empty: `reference` holds on every backend).
  std::function<Reference(const Case&)> cuda_reference;
  RunFn run;
  std::vector<Control> controls;
  // Gate 5: the largest geometries the kernel supports (shapes only, see shape_only; inputs are
  // zeros on the device and only the launch is checked).
  std::function<std::vector<Case>()> limit_cases;
  // A documented, understood failure (empty when none): a failing kernel with a finding is
  // counted as a known finding rather than a failure.
  std::string known_finding;
};

// The kernels registered for the contract, in registration order.
std::vector<KernelContract>& kernel_registry();
void add_kernel(KernelContract k);

// Called once before the registry is read: every kernel file's registration function.
void register_all_kernels();

// The registered kernel of that name (registering all first); an error names an unknown one.
const KernelContract& registered_kernel(const std::string& name);

}  // namespace tf::contract
