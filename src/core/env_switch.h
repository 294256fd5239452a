#pragma once
// Environment switches (comparisons between kernel variants): a named variable with a closed set of
// values, so a misspelt value is an error naming the variable, never a silent default.
#include <string>
#include <vector>

namespace tf {

// The value of environment variable `name`: choices[0] when unset or empty, else one of choices.
// Throws tf::Error "NAME=value: expected a, b or c" otherwise.
std::string env_switch(const char* name, const std::vector<std::string>& choices);

}  // namespace tf
