#include "families/common/memory.h"

#include <cstdio>

#include "core/error.h"

namespace tf {

void require_memory(const MemoryEstimate& need, const AvailableMemory& have, const std::string& what,
                    const std::string& run, const std::string& advice) {
  if (need.bytes <= double(have.bytes)) return;
  char buf[200];
  std::snprintf(buf, sizeof buf, "%.3g GiB (peak in %s), more than the %.3g GiB available (%s)", need.bytes / kGiB,
                need.peak.c_str(), double(have.bytes) / kGiB, have.what.c_str());
  fail(what + ": " + run + " needs an estimated " + buf + "; " + advice);
}

}  // namespace tf
