#pragma once
// Errors: one exception type whose message names the file, tensor or flag and what was expected.
#include <stdexcept>
#include <string>

namespace tf {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Out of device memory is its own kind so tools can say so plainly.
class OutOfMemory : public Error {
 public:
  explicit OutOfMemory(const std::string& what) : Error(what) {}
};

[[noreturn]] inline void fail(const std::string& what) { throw Error(what); }

inline void require(bool ok, const std::string& what) {
  if (!ok) throw Error(what);
}

}  // namespace tf
