#include "families/common/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

namespace tf {

Progress offset_progress(const Progress& outer, int64_t first, int64_t total) {
  if (!outer) return {};
  return [outer, first, total](const ProgressEvent& e) { outer(ProgressEvent{e.step, first + e.done, total}); };
}

bool progress_visible() { return ::isatty(STDERR_FILENO) == 1; }

Progress terminal_progress(const std::string& label) {
  if (!progress_visible()) return {};
  const auto start = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [label, start](const ProgressEvent& e) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - *start).count();
    const double eta = e.done > 0 && e.done < e.total ? s / double(e.done) * double(e.total - e.done) : 0.0;
    std::fprintf(stderr, "\r  %s %lld/%lld %s (%.1f s, ETA %.1f s)   ", label.c_str(), static_cast<long long>(e.done),
                 static_cast<long long>(e.total), e.step.c_str(), s, eta);
    if (e.done >= e.total) std::fprintf(stderr, "\n");
  };
}

}  // namespace tf
