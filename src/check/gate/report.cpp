#include "check/gate/report.h"

namespace tf::check::gate {

bool GateReport::steps_pass() const {
  for (const StepResult& s : steps)
    if (!s.verdict.pass) return false;
  return true;
}

bool GateReport::passed() const {
  bool ok = steps_pass() && repeat_same && packing_same.value_or(true);
  for (const Fact& f : facts) ok = ok && f.ok;
  return ok;
}

const StepResult* GateReport::step(const std::string& name) const {
  for (const StepResult& s : steps)
    if (s.name == name) return &s;
  return nullptr;
}

const Fact* GateReport::fact(const std::string& name) const {
  for (const Fact& f : facts)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace tf::check::gate
