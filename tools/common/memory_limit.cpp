#include "common/memory_limit.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace tf::tools {

void add_max_memory_flag(CLI::App& cmd, const std::shared_ptr<double>& gib) {
  cmd.add_option("--max-memory", *gib, "refuse a run estimated to need more than this many GiB (default: the device's memory)")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            std::size_t used = 0;
            double x = 0;
            try {
              x = std::stod(v, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used != v.size() || !(x > 0) || !std::isfinite(x)) return "expected a positive number of GiB, got " + v;
            return "";
          },
          "GIB"));
}

AvailableMemory memory_limit(Device d, double gib) {
  AvailableMemory have = available_memory(d);
  const double cap = gib * 1024.0 * 1024.0 * 1024.0;
  if (gib > 0 && cap < double(have.bytes)) have = {static_cast<uint64_t>(cap), "--max-memory"};
  return have;
}

}  // namespace tf::tools
