#pragma once
// Choosing the backend from a --device flag: the CUDA runtime is started (and the GPU checked)
// only when asked for.
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace tf {

// "cpu" or "cuda"; anything else, or cuda where this build or machine lacks it, is an error
// naming the flag.
Device select_device(const std::string& flag);

// "peak GPU memory: ..." for a CUDA run (the runtime's count since start), "" on the CPU.
std::string peak_memory_line(Device d);

// What a run on `d` may use at most: the machine's physical memory on the CPU, the GPU's free
// memory plus the blocks the runtime's pool keeps cached (left cached) on CUDA.
struct AvailableMemory {
  uint64_t bytes = 0;
  std::string what;  // "physical memory", "free GPU memory"
};
AvailableMemory available_memory(Device d);

// Returns the device's cached, unused blocks to the system (CUDA's pool, once its runtime has
// started), so a later stage or process finds them free; nothing to do on the CPU.
void release_cached_memory(Device d);

}  // namespace tf
