#pragma once
// Gate 5: the CUDA kernels' resources against the device's limits. Static usage (registers, static
// shared memory, local memory, i.e. spills and stack) comes from the compiled code in this very
// program: each fatbin of its .nv_fatbin section is loaded as a library and every kernel's
// cudaFuncGetAttributes read back; launch configurations are checked by launching every
// kernel at every tested and every supported size and asking the runtime whether the launch was
// refused. Without CUDA every function here reports nothing.
#include <string>
#include <vector>

namespace tf::contract {

// Whether a CUDA device is usable here; when not, `why` says so in one line.
bool cuda_device_present(std::string* why);

// One line per CUDA kernel in this program whose static resources exceed the device's limits
// (or a line saying the usage could not be read, which counts as a problem too).
struct StaticLimits {
  int kernels_seen = 0;
  std::vector<std::string> problems;
  std::vector<std::string> notes;  // informative lines (the device's limits, the tool used)
};
StaticLimits check_static_limits();

// After a run on the CUDA backend: synchronises and returns the runtime's launch error, if any,
// as one line (empty when the launches were accepted).
std::string launch_error_after_run();

}  // namespace tf::contract
