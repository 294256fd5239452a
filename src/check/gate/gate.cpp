#include "check/gate/gate.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace tf::check::gate {

GateRun::GateRun(const Case& c, Plant plant, const std::string& default_row_step, std::ostream& out)
    : case_(c), plant_(std::move(plant)), out_(out) {
  if (plant_.kind == Plant::Kind::Row) {
    if (plant_.step.empty()) plant_.step = default_row_step;
    if (!c.has_step(plant_.step))
      fail("--plant row@" + plant_.step + ": " + c.path() + " has no step \"" + plant_.step + "\" (its first is \"" +
           c.steps().front() + "\", its last \"" + c.steps().back() + "\")");
  }
  for (const std::string& s : c.steps()) name_width_ = std::max(name_width_, s.size());
  out_ << "case " << c.path() << ": " << c.component() << ", " << c.steps().size() << " steps; reference "
       << c.reference() << "\n"
       << table_header(name_width_);
}

Verdict GateRun::step(const std::string& name, Tensor ours, Rows rows, const std::string& why) {
  const Tensor ref = case_.reference_output(name, ours.shape, why);
  const std::optional<Tensor> torch = case_.torch_bf16(name, ours.shape, why);
  if (plant_.kind == Plant::Kind::Row && plant_.step == name) {
    // the limit does not depend on ours: judge once to learn it, then plant past it
    const Verdict before = judge_step(ours, ref, torch ? &*torch : nullptr, rows);
    scale_largest_row(ours, rows, planted_row_factor(before.limit_row));
  }
  report_.steps.push_back({name, judge_step(ours, ref, torch ? &*torch : nullptr, rows)});
  out_ << step_line(report_.steps.back(), name_width_);
  return report_.steps.back().verdict;
}

void GateRun::whole(const std::string& what, const Distance& ours, const std::optional<Distance>& torch) {
  out_ << whole_line(what, ours, torch);
}

GateReport GateRun::finish() {
  double sum = 0;
  report_.max_ratio = 0;
  for (const StepResult& s : report_.steps) {
    sum += s.verdict.ratio;
    report_.max_ratio = std::max(report_.max_ratio, s.verdict.ratio);
  }
  report_.mean_ratio = report_.steps.empty() ? 0 : sum / static_cast<double>(report_.steps.size());
  out_ << summary_line(report_, plant_);
  return report_;
}

}  // namespace tf::check::gate
