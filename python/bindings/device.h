#pragma once
// device="cpu"|"cuda" and max_memory= as the programs' --device and --max-memory take them.
#include <string>

#include "backend/device/device.h"

namespace tfpy {

// "cpu" or "cuda"; anything else, or cuda where this build or machine lacks it, is BadInput.
tf::Device device_from(const std::string& name);

// What a run may use: the device's memory, lowered to `gib` GiB when gib > 0 (BadInput when < 0).
tf::AvailableMemory memory_limit(tf::Device d, double gib);

}  // namespace tfpy
