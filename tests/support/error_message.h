#pragma once
// What a call's tf::Error says, for tests that check an error names the tensor, flag or file.
#include <string>

#include "core/error.h"

namespace tf::test_support {

// f's tf::Error message, or "no error" when f returns.
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace tf::test_support
