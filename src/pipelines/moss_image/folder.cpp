#include "pipelines/moss_image/folder.h"

#include <filesystem>

#include "core/error.h"
#include "io/json_file.h"

namespace tf::pipelines {
namespace fs = std::filesystem;

namespace {

std::string component(const std::string& dir, const std::string& name) {
  std::error_code ec;
  const fs::path sub = fs::path(dir) / name;
  if (!fs::is_directory(sub, ec))
    fail("--model " + dir + ": a MOSS-Image pipeline folder needs " + name +
         "/ (model_index.json, scheduler/, text_encoder/, tokenizer/, transformer/, vae/); it is missing");
  return sub.string();
}

SchedulerConfig read_scheduler(const std::string& dir) {
  SchedulerConfig s;
  const fs::path path = fs::path(dir) / "scheduler_config.json";
  s.source = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return s;  // the class's defaults
  const Json j = load_json_file(s.source);
  if (!j.is_object()) fail(s.source + ": expected a JSON object");
  s.train_steps = json_int_or(j, "num_train_timesteps", 1000, s.source);
  if (s.train_steps != 1000)
    fail(s.source + ": \"num_train_timesteps\" is " + std::to_string(s.train_steps) +
         "; the MOSS-Image sampler's grid has 1000 training steps");
  s.shift = json_number_or(j, "shift", 5.0, s.source);
  if (!(s.shift > 0) || !std::isfinite(s.shift))
    fail(s.source + ": \"shift\" is " + std::to_string(s.shift) + "; expected a finite number above 0");
  return s;
}

}  // namespace

MossImageFolder MossImageFolder::open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("--model " + dir + ": not a folder");
  const std::string index = (fs::path(dir) / "model_index.json").string();
  if (!fs::exists(index, ec))
    fail("--model " + dir + ": no model_index.json; generate takes the published pipeline folder");
  if (!load_json_file(index).is_object()) fail(index + ": expected a JSON object");
  MossImageFolder f;
  f.dir = dir;
  f.scheduler = component(dir, "scheduler");
  f.text_encoder = component(dir, "text_encoder");
  f.tokenizer = component(dir, "tokenizer");
  f.transformer = component(dir, "transformer");
  f.vae = component(dir, "vae");
  f.scheduler_config = read_scheduler(f.scheduler);
  f.encoder_config = moss_image::load_encoder_config((fs::path(f.text_encoder) / "config.json").string());
  f.transformer_config = moss_image::load_transformer_config(f.transformer);
  f.vae_config = flux2_vae::load_config(f.vae);
  const auto& tc = f.transformer_config;
  if (tc.text_dim != f.encoder_config.hidden)
    fail(tc.source + ": \"text_dim\" " + std::to_string(tc.text_dim) + " is not the text encoder's hidden size " +
         std::to_string(f.encoder_config.hidden) + " (" + f.encoder_config.source + ")");
  if (tc.latent_channels != f.vae_config.token_width())
    fail(tc.source + ": \"latent_channels\" " + std::to_string(tc.latent_channels) +
         " is not the VAE's latent channels x patch area " + std::to_string(f.vae_config.token_width()) + " (" +
         f.vae + "/config.json)");
  return f;
}

double MossImageFolder::weight_file_bytes(const std::string& component_dir) {
  double bytes = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(component_dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".safetensors") bytes += double(e.file_size(ec));
  return bytes;
}

}  // namespace tf::pipelines
