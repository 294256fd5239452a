// tf-flux2-vae check: the stepwise reference gate against a case from python/cases/flux2_vae_case.py.
#include <iostream>

#include "backend/device/device.h"
#include "check/gate/flux2_vae.h"
#include "common/command.h"
#include "common/plant_flag.h"

namespace {

tf::tools::RegisterCommand reg("check", "the reference gate: each step vs float64 within twice torch bf16's distance", [](CLI::App& c) {
  auto model = std::make_shared<std::string>(), cs = std::make_shared<std::string>(),
       device = std::make_shared<std::string>("cpu");
  auto plant = std::make_shared<tf::check::gate::Plant>();
  c.add_option("--model", *model, "pipeline folder or its vae/ folder")->required();
  c.add_option("--case", *cs, "case safetensors written by python/cases/flux2_vae_case.py")->required();
  c.add_option("--device", *device, "cpu or cuda");
  tf::tools::add_plant_flag(c, plant, tf::check::gate::flux2_vae_plants());
  return [=]() -> int {
    const tf::Device dev = tf::select_device(*device);
    const auto vae = tf::flux2_vae::Vae::load(*model, dev);
    std::cout << vae.config().summary() << ", on " << tf::device_name(dev) << "\n";
    return tf::check::gate::run_flux2_vae_gate(vae, *cs, *plant, std::cout).passed() ? 0 : 1;
  };
});

}  // namespace
