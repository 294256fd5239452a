// tf-moss-image-encoder check: the reference gate on a case from python/cases/moss_image_case.py.
// Exit 0 when every gate passes, 1 otherwise.
#include <iostream>
#include <memory>
#include <string>

#include "backend/device/device.h"
#include "check/encoder_gate.h"
#include "common/command.h"
#include "core/error.h"
#include "families/moss_image/encoder/prompt_encoder.h"

namespace {

tf::tools::RegisterCommand reg("check", "Gate the encoder against a reference case (exit 1 on failure)",
                               [](CLI::App& c) {
  struct Opts {
    std::string model, case_path, device = "cpu", plant = "none";
  };
  auto o = std::make_shared<Opts>();
  c.add_option("--model", o->model, "pipeline folder (model_index.json) or text encoder folder")->required();
  c.add_option("--case", o->case_path, "case .safetensors from python/cases/moss_image_case.py encode")->required();
  c.add_option("--device", o->device, "cpu or cuda");
  c.add_option("--plant", o->plant, "control that must fail: none, row (one row 5% off), repeat (differing repeat)")
      ->check(CLI::IsMember({"none", "row", "repeat"}));
  return [o]() -> int {
    const tf::Device device = tf::select_device(o->device);
    const bool rounded = tf::check::case_rounds_small_params(o->case_path);
    auto enc = tf::moss_image::PromptEncoder::load(o->model, {device, rounded});
    std::cout << "encoder: " << enc.encoder().config().summary() << " on " << tf::device_name(device) << "\n";
    tf::check::EncoderGateOptions opt;
    opt.case_path = o->case_path;
    opt.tokenize = [&enc](const std::string& text, bool chat) { return enc.tokenize(text, chat); };
    opt.plant = o->plant == "row"      ? tf::check::EncoderGateOptions::Plant::RowOff
                : o->plant == "repeat" ? tf::check::EncoderGateOptions::Plant::DifferingRepeat
                                       : tf::check::EncoderGateOptions::Plant::None;
    return tf::check::run_encoder_gate(enc.encoder(), opt, std::cout).passed() ? 0 : 1;
  };
});

}  // namespace
