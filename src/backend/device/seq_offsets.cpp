#include "backend/device/seq_offsets.h"

#include <string>

#include "core/error.h"

namespace tf {

void check_seq_offsets(const char* op, const SeqOffsets& offsets, int64_t tokens) {
  std::string where = std::string(op) + ": seq_offsets";
  if (offsets.size() < 2) fail(where + " needs at least 2 entries ({0, tokens}), got " + std::to_string(offsets.size()));
  if (offsets.front() != 0) fail(where + "[0] is " + std::to_string(offsets.front()) + ", expected 0");
  for (size_t s = 0; s + 1 < offsets.size(); ++s)
    if (offsets[s + 1] < offsets[s])
      fail(where + " decreases at entry " + std::to_string(s + 1) + " (" + std::to_string(offsets[s]) + " -> " +
           std::to_string(offsets[s + 1]) + ")");
  if (offsets.back() != tokens)
    fail(where + " ends at " + std::to_string(offsets.back()) + " but the tensors hold " + std::to_string(tokens) +
         " tokens");
}

}  // namespace tf
