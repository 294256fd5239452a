// tf-idol-vae check: the reference gate against a case from python/cases/idol_case.py vae.
#include <iostream>

#include "backend/device/device.h"
#include "check/idol_vae_gate.h"
#include "common/command.h"

namespace {

tf::tools::RegisterCommand reg("check", "the reference gate: each stage vs float64 within twice torch bf16's distance", [](CLI::App& c) {
  auto model = std::make_shared<std::string>(), cs = std::make_shared<std::string>(),
       device = std::make_shared<std::string>("cpu"), plant = std::make_shared<std::string>();
  c.add_option("--model", *model, "pipeline folder or its vae/ folder")->required();
  c.add_option("--case", *cs, "case safetensors written by python/cases/idol_case.py vae")->required();
  c.add_option("--device", *device, "cpu or cuda");
  c.add_option("--plant", *plant, "self-test: plant a fault the gate must catch (row-error[@STAGE] or padding-row)");
  return [=]() -> int {
    const tf::Device dev = tf::select_device(*device);
    const auto vae = tf::flux2_vae::Vae::load(*model, dev);
    std::cout << vae.config().summary() << ", on " << tf::device_name(dev) << "\n";
    const auto rep = tf::check::run_vae_gate(vae, *cs, {*plant}, std::cout);
    return rep.pass ? 0 : 1;
  };
});

}  // namespace
