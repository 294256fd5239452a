#pragma once
// One run of the stepwise reference gate, shared by every component's driver: the driver runs
// each step on its input and hands the result here, which judges it by the rule (planting a row
// when asked), prints its table line, and at the end prints the summary and returns the report.
#include <optional>
#include <ostream>
#include <string>

#include "check/gate/case.h"
#include "check/gate/plant.h"
#include "check/gate/printer.h"
#include "check/gate/report.h"

namespace tf::check::gate {

class GateRun {
 public:
  // Prints the case line and the table's header. A row plant without a step goes to
  // `default_row_step`; a row plant naming a step the case lacks is an error naming --plant.
  GateRun(const Case& c, Plant plant, const std::string& default_row_step, std::ostream& out);

  const Case& case_file() const { return case_; }
  const Plant& plant() const { return plant_; }

  // Judges `ours` (F32 or BF16, CPU) against f32.<step> and bf16.<step> of its shape; `why`
  // says where the shape comes from in errors.
  Verdict step(const std::string& name, Tensor ours, Rows rows, const std::string& why);

  // A whole-run distance: printed, not gated.
  void whole(const std::string& what, const Distance& ours, const std::optional<Distance>& torch = std::nullopt);
  void repeat(bool same) { report_.repeat_same = report_.repeat_same && same; }
  void packing(bool same) { report_.packing_same = report_.packing_same.value_or(true) && same; }
  void fact(const std::string& name, const std::string& value, bool ok) { report_.facts.push_back({name, value, ok}); }

  // Prints the summary line and returns the report.
  GateReport finish();

 private:
  const Case& case_;
  Plant plant_;
  std::ostream& out_;
  size_t name_width_ = 4;
  GateReport report_;
};

}  // namespace tf::check::gate
