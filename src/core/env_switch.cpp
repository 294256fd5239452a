#include "core/env_switch.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"

namespace tf {

std::string env_switch(const char* name, const std::vector<std::string>& choices) {
  const char* e = std::getenv(name);
  if (!e || !*e) return choices.at(0);
  if (std::find(choices.begin(), choices.end(), e) != choices.end()) return e;
  std::string expected;
  for (size_t i = 0; i < choices.size(); ++i)
    expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  fail(std::string(name) + "=" + e + ": expected " + expected);
}

}  // namespace tf
