#include "device.h"

#include <cmath>

#include "core/error.h"
#include "errors.h"

namespace tfpy {

tf::Device device_from(const std::string& name) {
  if (name != "cpu" && name != "cuda") throw BadInput("device: expected 'cpu' or 'cuda', got '" + name + "'");
  try {
    return tf::select_device(name);
  } catch (const tf::Error& e) {
    throw BadInput("device='" + name + "': " + e.what());
  }
}

tf::AvailableMemory memory_limit(tf::Device d, double gib) {
  if (!(gib >= 0) || !std::isfinite(gib))
    throw BadInput("max_memory: expected a positive number of GiB (or 0 for the device's memory), got " +
                   std::to_string(gib));
  tf::AvailableMemory have = tf::available_memory(d);
  const double cap = gib * 1024.0 * 1024.0 * 1024.0;
  if (gib > 0 && cap < double(have.bytes)) have = {static_cast<uint64_t>(cap), "max_memory"};
  return have;
}

}  // namespace tfpy
