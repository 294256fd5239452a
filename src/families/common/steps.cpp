#include "families/common/steps.h"

#include <utility>

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
  Carried c{std::move(x), {}};
  for (int64_t i = 0; i < total; ++i) {
    c = steps[i].carry ? steps[i].carry(c) : Carried{steps[i].run(c.x), {}};
    report(progress, steps[i].name, i + 1, total);
  }
  return c.x;
}

}  // namespace tf
