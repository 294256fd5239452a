// tf-moss-image check COMPONENT: a component's stepwise reference gate on a case from
// python/cases/; exit 0 when every gate passes, 1 otherwise.
#include <iostream>
#include <memory>
#include <string>

#include "backend/device/device.h"
#include "check/gate/encoder.h"
#include "check/gate/pipeline.h"
#include "check/gate/transformer.h"
#include "common/command.h"
#include "common/plant_flag.h"
#include "families/moss_image/encoder/prompt_encoder.h"
#include "families/moss_image/transformer/transformer.h"
#include "pipelines/moss_image/pipeline.h"

namespace {

int check_encoder(const std::string& model, const std::string& case_path, tf::Device device,
                  const tf::check::gate::Plant& plant) {
  const bool rounded = tf::check::gate::encoder_case_rounds_small_params(case_path);
  auto enc = tf::moss_image::PromptEncoder::load(model, {device, rounded});
  std::cout << "encoder: " << enc.encoder().config().summary() << " on " << tf::device_name(device) << "\n";
  tf::check::gate::EncoderGateOptions opt;
  opt.case_path = case_path;
  opt.tokenize = [&enc](const std::string& text, bool chat) { return enc.tokenize(text, chat); };
  opt.plant = plant;
  return tf::check::gate::run_encoder_gate(enc.encoder(), opt, std::cout).passed() ? 0 : 1;
}

int check_transformer(const std::string& model, const std::string& case_path, tf::Device device,
                      const tf::check::gate::Plant& plant) {
  const auto tr = tf::moss_image::Transformer::load(model, {device, true});
  std::cout << "transformer: " << tr.config().summary() << " on " << tf::device_name(device) << "\n";
  return tf::check::gate::run_transformer_gate(tr, {case_path, plant}, std::cout).passed() ? 0 : 1;
}

int check_pipeline(const std::string& model, const std::string& case_path, tf::Device device,
                   const tf::check::gate::Plant& plant) {
  tf::pipelines::PipelineOptions options;
  options.device = device;
  const auto pipe = tf::pipelines::MossImagePipeline::load(model, options);
  const auto& f = pipe.folder();
  std::cout << "pipeline: " << f.transformer_config.summary() << "; " << f.vae_config.summary() << " on "
            << tf::device_name(device) << "\n";
  return tf::check::gate::run_pipeline_gate(pipe, {case_path, plant}, std::cout).passed() ? 0 : 1;
}

tf::tools::RegisterCommand reg("check", "Gate a component against a reference case (exit 1 on failure)", [](CLI::App& c) {
  struct Opts {
    std::string component, model, case_path, device = "cpu";
  };
  auto o = std::make_shared<Opts>();
  auto plant = std::make_shared<tf::check::gate::Plant>();
  c.add_option("component", o->component, "the component: encoder, transformer or pipeline (the whole run)")
      ->required()
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            return v == "encoder" || v == "transformer" || v == "pipeline"
                       ? ""
                       : "unknown component \"" + v + "\" (expected encoder, transformer or pipeline)";
          },
          "COMPONENT"));
  c.add_option("--model", o->model, "pipeline folder (model_index.json) or the component's folder")->required();
  c.add_option("--case", o->case_path,
               "case .safetensors from python/cases/ (moss_image_case.py encode, moss_transformer_case.py case, moss_pipeline_case.py)")
      ->required();
  c.add_option("--device", o->device, "cpu or cuda");
  tf::tools::add_plant_flag(c, plant, tf::check::gate::kPipelinePlants);
  return [o, plant]() -> int {
    const tf::Device device = tf::select_device(o->device);
    if (o->component == "transformer") return check_transformer(o->model, o->case_path, device, *plant);
    if (o->component == "pipeline") return check_pipeline(o->model, o->case_path, device, *plant);
    return check_encoder(o->model, o->case_path, device, *plant);
  };
});

}  // namespace
