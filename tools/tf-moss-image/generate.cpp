// tf-moss-image generate: prompt -> picture, the whole MOSS-Image pipeline.
#include <sys/resource.h>

#include <cstdio>
#include <memory>
#include <string>

#include "backend/device/device.h"
#include "common/command.h"
#include "common/seed_flag.h"
#include "common/memory_limit.h"
#include "common/tensor_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "families/common/memory.h"
#include "families/common/progress.h"
#include "io/png.h"
#include "io/safetensors.h"
#include "pipelines/moss_image/pipeline.h"
#include "text/utf8.h"

namespace {

std::string peak_host_memory() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  char buf[80];
  std::snprintf(buf, sizeof buf, "peak host memory %.2f GiB", ru.ru_maxrss / (1024.0 * 1024.0));
  return buf;
}

std::string prompt_text(const std::string& flag, const std::string& file) {
  std::string text = tf::read_text_file(file);
  tf::text::require_valid_utf8(text, flag + " " + file);
  return text;
}

tf::tools::RegisterCommand reg("generate", "Prompt -> picture: the whole MOSS-Image pipeline", [](CLI::App& c) {
  struct Opts {
    std::string model, prompt_file, negative_file, noise, rows, out, save_latents, device = "cpu", seed;
    tf::pipelines::GenerateRequest r;
    double shift = 0;
  };
  auto o = std::make_shared<Opts>();
  auto max_memory = std::make_shared<double>(0);
  c.add_option("--model", o->model,
               "the published pipeline folder (model_index.json, scheduler/, text_encoder/, tokenizer/, transformer/, vae/)")
      ->required();
  auto* prompt = c.add_option("--prompt-file", o->prompt_file, "UTF-8 text file holding the prompt");
  c.add_option("--negative-file", o->negative_file, "UTF-8 text file holding the negative prompt (default: empty)");
  c.add_option("--width", o->r.width, "picture width, a multiple of 16 (default 1024)");
  c.add_option("--height", o->r.height, "picture height, a multiple of 16 (default 1024)");
  c.add_option("--steps", o->r.steps, "sampling steps (default 50)");
  c.add_option("--guidance", o->r.guidance, "classifier-free guidance scale, at least 0 (default 3; 1 runs no negative branch)");
  auto* shift = c.add_option("--shift", o->shift, "the schedule's shift (default: the scheduler config's, 5)");
  auto* seed = c.add_option("--seed", o->seed, "starting noise as torch.randn with torch.Generator().manual_seed(N) (default 0)");
  auto* noise = c.add_option("--noise", o->noise, "starting noise: safetensors with `noise` F32 [128, H/16, W/16] (a leading 1 accepted)");
  seed->excludes(noise);
  noise->excludes(seed);
  auto* rows = c.add_option("--rows", o->rows,
                            "prompt rows instead of the encoder: safetensors with `prompt.rows` and `negative.rows`, as "
                            "tf-moss-image encode writes them");
  rows->excludes(prompt);
  prompt->excludes(rows);
  c.add_option("--out", o->out, "output PNG")->required();
  c.add_option("--save-latents", o->save_latents, "also write the sampler's last latents: `latents` F32 [128, H/16, W/16]");
  c.add_option("--device", o->device, "cpu or cuda");
  tf::tools::add_max_memory_flag(c, max_memory);
  return [=]() -> int {
    tf::pipelines::GenerateRequest r = o->r;
    if (o->prompt_file.empty() == o->rows.empty()) tf::fail("give one of --prompt-file FILE or --rows FILE");
    if (!o->prompt_file.empty()) r.prompt = prompt_text("--prompt-file", o->prompt_file);
    if (!o->negative_file.empty()) {
      if (!o->rows.empty()) tf::fail("--negative-file: the negative prompt's rows come from --rows");
      r.negative = prompt_text("--negative-file", o->negative_file);
    }
    if (shift->count()) r.shift = o->shift;
    if (seed->count()) r.seed = tf::tools::parse_seed("--seed", o->seed);
    if (!o->noise.empty()) r.noise = tf::tools::read_tensor("--noise", o->noise, "noise");
    if (!o->rows.empty()) {
      r.prompt_rows = tf::tools::read_tensor("--rows", o->rows, "prompt.rows");
      if (r.guidance != 1.0) r.negative_rows = tf::tools::read_tensor("--rows", o->rows, "negative.rows");
    }
    const tf::Device device = tf::select_device(o->device);
    tf::pipelines::PipelineOptions po;
    po.device = device;
    po.max_memory_bytes = *max_memory * tf::kGiB;
    po.notes = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    po.field_name = [o](const std::string& field) -> std::string {
      if (field == "prompt_rows") return "--rows " + o->rows + ": tensor prompt.rows";
      if (field == "negative_rows") return "--rows " + o->rows + ": tensor negative.rows";
      if (field == "noise") return "--noise " + o->noise + ": tensor noise";
      if (field == "memory") return "--width/--height";
      return "--" + field;
    };
    const auto pipe = tf::pipelines::MossImagePipeline::load(o->model, po);
    const auto& f = pipe.folder();
    std::fprintf(stderr, "encoder: %s\ntransformer: %s\nvae: %s\n", f.encoder_config.summary().c_str(),
                 f.transformer_config.summary().c_str(), f.vae_config.summary().c_str());
    const auto g = pipe.generate(r, [](const std::string& stage) { return tf::terminal_progress(stage); });
    tf::write_png_rgb8(o->out, g.picture);
    if (!o->save_latents.empty())
      tf::write_safetensors(o->save_latents, {{"latents", g.latents}}, {{"producer", "tf-moss-image generate"}});
    const auto& t = g.seconds;
    const int64_t steps = static_cast<int64_t>(g.sigmas.size()) - 1;
    const double run = t.encode + t.sample + t.decode;
    const std::string gpu = tf::peak_memory_line(device);
    std::fprintf(stderr,
                 "picture %lldx%lld -> %s on %s: %.2f s without loads (encode %.3f s, %lld steps %.2f s = %.3f s/step, "
                 "decode %.3f s); loads %.2f s (encoder %.2f, transformer %.2f, vae %.2f); %lld + %lld prompt tokens; "
                 "%s%s%s\n",
                 static_cast<long long>(g.picture.width), static_cast<long long>(g.picture.height), o->out.c_str(),
                 tf::device_name(device), run, t.encode, static_cast<long long>(steps), t.sample,
                 steps ? t.sample / double(steps) : 0.0, t.decode, t.load_encoder + t.load_transformer + t.load_vae,
                 t.load_encoder, t.load_transformer, t.load_vae, static_cast<long long>(g.prompt_tokens),
                 static_cast<long long>(g.negative_tokens), peak_host_memory().c_str(), gpu.empty() ? "" : "; ",
                 gpu.c_str());
    return 0;
  };
});

}  // namespace
