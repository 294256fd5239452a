#include "families/common/steps.h"

#include "core/error.h"

namespace tf {

const Step& find_step(const std::vector<Step>& steps, const std::string& name, const std::string& where) {
  std::string names;
  for (const Step& s : steps) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  fail(where + ": no step \"" + name + "\" in this model (its steps: " + names + "; a different geometry?)");
}

Tensor run_steps(const std::vector<Step>& steps, Tensor x, const Progress& progress) {
  const int64_t total = static_cast<int64_t>(steps.size());
  for (int64_t i = 0; i < total; ++i) {
    x = steps[i].run(x);
    report(progress, steps[i].name, i + 1, total);
  }
  return x;
}

}  // namespace tf
