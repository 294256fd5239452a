#pragma once
// A family's run as named steps: the unit the stepwise reference gate checks one at a time (each
// step alone on the reference's input) and the unit progress is reported in.
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "families/common/progress.h"

namespace tf {

struct Step {
  std::string name;
  std::function<Tensor(const Tensor&)> run;  // the step's input -> its output, on the family's device
};

// The step named `name`, or an error naming `where` (a case file) and the steps there are.
const Step& find_step(const std::vector<Step>& steps, const std::string& name, const std::string& where);

// Runs the steps in order on x, reporting each finished step to `progress`.
Tensor run_steps(const std::vector<Step>& steps, Tensor x, const Progress& progress = {});

}  // namespace tf
