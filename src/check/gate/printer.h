#pragma once
// The gate's one result format: a table line per step (ours, torch bf16's and the limit's cosine
// error and worst row, ours' ratio to the limit, ok or FAIL), a line per whole-run distance
// (printed, not gated), and one summary line:
//   PASS|FAIL: N steps, ratio to limit mean X max Y, repeat identical|DIFFERS, packing identical|DIFFERS|-[, <fact> ...][, planted P]
#include <optional>
#include <string>

#include "check/gate/plant.h"
#include "check/gate/report.h"

namespace tf::check::gate {

// The table's column titles; `name_width`: the widest step name.
std::string table_header(size_t name_width);
std::string step_line(const StepResult& step, size_t name_width);
std::string whole_line(const std::string& what, const Distance& ours, const std::optional<Distance>& torch);
std::string summary_line(const GateReport& report, const Plant& plant);

}  // namespace tf::check::gate
