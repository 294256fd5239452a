#pragma once
// Progress of a family's long work, reported one way by every family: after each step, its name
// and how many steps of how many are done. Tools show it on a terminal; a pipeline forwards a
// family's events into its own count (offset_progress).
#include <cstdint>
#include <functional>
#include <string>

namespace tf {

struct ProgressEvent {
  const std::string& step;  // the step just finished ("layer 3", "dec.up.1", "step 12")
  int64_t done = 0, total = 0;
};
using Progress = std::function<void(const ProgressEvent&)>;

// Reports `e` to `p` when there is a p (the families' one call site shape).
inline void report(const Progress& p, const std::string& step, int64_t done, int64_t total) {
  if (p) p(ProgressEvent{step, done, total});
}

// Events of a sub-run whose steps are steps [first, first + its total) of a run of `total` steps.
Progress offset_progress(const Progress& outer, int64_t first, int64_t total);

// True when stderr is a terminal: long work shows progress there, never in logs.
bool progress_visible();

// "\r  LABEL k/total STEP (elapsed s, ETA s)" on stderr, a newline after the last step; an empty
// Progress when stderr is not a terminal.
Progress terminal_progress(const std::string& label);

}  // namespace tf
