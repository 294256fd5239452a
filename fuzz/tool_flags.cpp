// A program's command-line flags (TF_PROGRAM names it): the input is its argv, one argument per
// line. Parsing must end in success or CLI11's clear error; no command is run.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/command.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // without the program's commands every input is refused and nothing is fuzzed
  static const bool linked = [] {
    if (tf::tools::registered_commands() > 0) return true;
    std::fprintf(stderr, "fuzz_flags: %s has no commands linked in (tools/CMakeLists.txt's _commands objects)\n", TF_PROGRAM);
    std::abort();
  }();
  (void)linked;
  std::vector<std::string> args{TF_PROGRAM};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  try {
    tf::tools::parse_tool_flags(static_cast<int>(argv.size()), argv.data(), TF_PROGRAM);
  } catch (const tf::Error&) {
  }
  return 0;
}
