#include "common/command.h"

#include <cstdio>
#include <exception>
#include <new>
#include <vector>

#include "core/error.h"

namespace tf::tools {

namespace {
struct Entry {
  std::string name, help;
  CommandSetup setup;
};
std::vector<Entry>& registry() {
  static std::vector<Entry> r;
  return r;
}
}  // namespace

RegisterCommand::RegisterCommand(const char* name, const char* help, CommandSetup setup) {
  registry().push_back({name, help, std::move(setup)});
}

size_t registered_commands() { return registry().size(); }

int run_tool(int argc, char** argv, const char* program, const char* description) {
  CLI::App app(description, program);
  std::vector<std::pair<CLI::App*, std::function<int()>>> runs;
  std::function<int()> main_run;
  for (auto& e : registry()) {
    if (e.name.empty()) {
      main_run = e.setup(app);
    } else {
      CLI::App* sub = app.add_subcommand(e.name, e.help);
      runs.emplace_back(sub, e.setup(*sub));
    }
  }
  if (!runs.empty() && !main_run) app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    // one line naming the flag, like every other error
    std::string why = e.what();
    bool known = false;
    for (auto& r : runs) known = known || (argc > 1 && r.first->check_name(argv[1]));
    if (!runs.empty() && !main_run && argc > 1 && argv[1][0] != '-' && !known) {
      why = std::string("unknown command \"") + argv[1] + "\" (expected";
      for (size_t i = 0; i < runs.size(); ++i) why += (i ? ", " : " ") + runs[i].first->get_name();
      why += ")";
    }
    for (char& ch : why)
      if (ch == '\n' || ch == '\r') ch = ' ';
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", program, why.c_str(), program);
    return e.get_exit_code() != 0 ? e.get_exit_code() : 2;
  }
  try {
    for (auto& [sub, run] : runs)
      if (sub->parsed()) return run();
    if (main_run) return main_run();
    std::fprintf(stderr, "%s: no command given\n", program);
    return 2;
  } catch (const OutOfMemory& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 3;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of host memory\n", program);
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
    return 1;
  }
}

int parse_tool_flags(int argc, const char* const* argv, const char* program) {
  CLI::App app("", program);
  bool has_main = false, has_sub = false;
  std::vector<std::function<int()>> unused;
  for (auto& e : registry()) {
    if (e.name.empty()) {
      has_main = true;
      unused.push_back(e.setup(app));
    } else {
      has_sub = true;
      unused.push_back(e.setup(*app.add_subcommand(e.name, e.help)));
    }
  }
  if (has_sub && !has_main) app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code();
  }
  return 0;
}

}  // namespace tf::tools
