#pragma once
// What a gate run found: each step's verdict, the repeat and packing contracts, and the
// component's own facts (ids, picture levels); passed() is the gate's answer.
#include <optional>
#include <string>
#include <vector>

#include "check/gate/rule.h"

namespace tf::check::gate {

struct StepResult {
  std::string name;
  Verdict verdict;
};

// A gated fact a component adds to the summary, as "<name> <value>" ("ids match").
struct Fact {
  std::string name, value;
  bool ok = true;
};

struct GateReport {
  std::vector<StepResult> steps;
  bool repeat_same = true;
  std::optional<bool> packing_same;  // absent when the component packs nothing
  std::vector<Fact> facts;
  double mean_ratio = 0, max_ratio = 0;  // over the steps' ratios to their limits

  bool steps_pass() const;
  bool passed() const;
  const StepResult* step(const std::string& name) const;  // null when not run
  const Fact* fact(const std::string& name) const;        // null when not stated
};

}  // namespace tf::check::gate
