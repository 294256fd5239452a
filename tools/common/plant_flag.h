#pragma once
// --plant PLANT on a check command: parsed once, as the flags are, so an unknown plant is a flag
// error naming --plant and listing the accepted ones (check/gate/plant.h's syntax).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "check/gate/plant.h"

namespace tf::tools {

// `extras`: the component's own plants, accepted besides row[@STEP] and repeat.
void add_plant_flag(CLI::App& cmd, const std::shared_ptr<check::gate::Plant>& plant,
                    const std::vector<std::string>& extras = {});

}  // namespace tf::tools
