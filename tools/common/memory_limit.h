#pragma once
// --max-memory GIB: the most a run may use, never more than the device has. Tools refuse a run
// whose estimate exceeds it before doing any work.
#include <CLI/CLI.hpp>
#include <memory>

#include "backend/device/device.h"

namespace tf::tools {

void add_max_memory_flag(CLI::App& cmd, const std::shared_ptr<double>& gib);

// The device's available memory, lowered to `gib` GiB when the flag was given (gib > 0).
AvailableMemory memory_limit(Device d, double gib);

}  // namespace tf::tools
