#pragma once
// The CUDA runtime as the rest of TensorFold sees it: started once by select_device("cuda"),
// it owns the device, its one stream, the memory hooks and the cuBLASLt handle. Plain C++ (no
// CUDA headers) so host-only code can include it; kernels use backend/cuda/check.h.
#include <cstddef>
#include <string>

namespace tf::cuda {

// Picks device 0, refuses a GPU below sm_90 by name (pointing to --device cpu), registers the
// CUDA memory hooks, creates the stream and the cuBLASLt handle. Idempotent.
void init_runtime();
bool runtime_started();

// Why a GPU cannot run this build's kernels (empty when it can): the kernels are sm_90a only.
std::string unsupported_gpu_reason(const std::string& name, int major, int minor);

// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"
std::string device_description();

struct MemoryStats {
  size_t in_use = 0;        // bytes held by live tensors and workspaces
  size_t peak_in_use = 0;   // the most in_use has been since the last reset
  size_t device_free = 0;   // what the driver reports free now
  size_t pool_cached = 0;   // freed blocks the pool keeps for reuse (ours to allocate, not the driver's free)
  size_t device_total = 0;
};
MemoryStats memory_stats();
void reset_peak_memory();
// "peak GPU memory: 16.42 GiB (in use now 0.00 GiB)" for tools to print.
std::string peak_memory_line();

// Waits for all work on the stream; a failure in any earlier kernel becomes a tf::Error.
void synchronize(const char* after = "queued GPU work");
// Returns memory the pools keep cached for reuse (device, and pinned host) to the driver.
void release_cached_memory();

// Another program's stream (a cudaStream_t, 0 the legacy default stream; torch's current stream) and
// the engine's, ordered without waiting on the host: the engine's work queued after
// engine_waits_for(s) starts after what s held then; what s queues after s_waits_for_engine(s) starts
// after the engine's work queued so far.
void engine_waits_for(void* s);
void s_waits_for_engine(void* s);

}  // namespace tf::cuda
