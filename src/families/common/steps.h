#pragma once
// A family's run as named steps: the unit the stepwise reference gate checks one at a time (each
// step alone on the reference's input) and the unit progress is reported in.
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "families/common/progress.h"

namespace tf {

// An activation between steps with what the step that wrote it knows of it (the VAE's channel moments of
// x, so the next GroupNorm need not read x for them), or an undefined `stats`.
struct Carried {
  Tensor x;
  Tensor stats;
};

struct Step {
  std::string name;
  std::function<Tensor(const Tensor&)> run;  // the step's input -> its output, on the family's device
  std::function<Carried(const Carried&)> carry = nullptr;  // or null: run, taking and giving what run_steps carries
};

// The step named `name`, or an error naming `where` (a case file) and the steps there are.
const Step& find_step(const std::vector<Step>& steps, const std::string& name, const std::string& where);

// Runs the steps in order on x, reporting each finished step to `progress`; what a step carries goes to
// the next.
Tensor run_steps(const std::vector<Step>& steps, Tensor x, const Progress& progress = {});

}  // namespace tf
