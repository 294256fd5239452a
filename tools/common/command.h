#pragma once
// Command-line programs: each command file registers its sub-command; run_tool parses the flags,
// runs the chosen command and turns every error into one clear line and a non-zero exit.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace tf::tools {

// Declares the command's flags on `cmd` and returns what runs it (its exit code).
using CommandSetup = std::function<std::function<int()>(CLI::App& cmd)>;

struct RegisterCommand {
  // An empty name makes the program itself the command (no sub-command word).
  RegisterCommand(const char* name, const char* help, CommandSetup setup);
};

int run_tool(int argc, char** argv, const char* program, const char* description);

// Builds the program's flags and parses argv without running any command or printing: 0 when
// the flags parse, CLI11's exit code otherwise (for the flag fuzzers).
int parse_tool_flags(int argc, const char* const* argv, const char* program);

// How many commands this program registered (0 means its command files were not linked in).
size_t registered_commands();

}  // namespace tf::tools
