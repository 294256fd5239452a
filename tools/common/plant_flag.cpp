#include "common/plant_flag.h"

#include "core/error.h"

namespace tf::tools {

void add_plant_flag(CLI::App& cmd, const std::shared_ptr<check::gate::Plant>& plant, const std::vector<std::string>& extras) {
  std::string help = "a control the gate must fail: row[@STEP] (one row of a step far off), repeat (a differing repeat)";
  for (const std::string& e : extras) help += ", " + e;
  cmd.add_option_function<std::string>(
      "--plant",
      [plant, extras](const std::string& value) {
        try {
          *plant = check::gate::Plant::parse(value, extras);
        } catch (const Error& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help);
}

}  // namespace tf::tools
