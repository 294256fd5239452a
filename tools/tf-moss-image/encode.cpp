// tf-moss-image encode: prompt (and negative) files -> their token ids and the encoder's final
// rows in one safetensors file; both prompts go through the weights in one pass.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "backend/device/device.h"
#include "common/command.h"
#include "common/memory_limit.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "families/common/progress.h"
#include "families/moss_image/encoder/memory.h"
#include "families/moss_image/encoder/prompt_encoder.h"
#include "io/safetensors.h"
#include "text/utf8.h"

namespace {

// Peak resident memory counts the mapped checkpoint pages the CPU forward touched.
std::string peak_memory(tf::Device device) {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  char buf[96];
  std::snprintf(buf, sizeof buf, "peak host memory (RSS, mapped weights included): %.2f GiB",
                ru.ru_maxrss / (1024.0 * 1024.0));
  std::string s = buf, gpu = tf::peak_memory_line(device);
  return gpu.empty() ? s : s + "; " + gpu;
}

tf::Tensor ids_tensor(const std::vector<int32_t>& ids) {
  tf::Tensor t = tf::empty(tf::DType::I32, {static_cast<int64_t>(ids.size())});
  std::copy(ids.begin(), ids.end(), t.ptr<int32_t>());
  return t;
}

tf::tools::RegisterCommand reg("encode", "Encode a prompt (and a negative prompt) into the encoder's final rows",
                               [](CLI::App& c) {
  struct Opts {
    std::string model, prompt_file, negative_file, out, device = "cpu";
    bool keep_f32_params = false;
  };
  auto max_memory = std::make_shared<double>(0);
  auto o = std::make_shared<Opts>();
  c.add_option("--model", o->model, "pipeline folder (model_index.json) or text encoder folder")->required();
  c.add_option("--prompt-file", o->prompt_file, "UTF-8 text file holding the prompt")->required();
  c.add_option("--negative-file", o->negative_file, "UTF-8 text file holding the negative prompt");
  c.add_option("--out", o->out, "output .safetensors (prompt.ids, prompt.rows, negative.*)")->required();
  c.add_option("--device", o->device, "cpu or cuda");
  c.add_flag("--keep-f32-params", o->keep_f32_params,
             "use A_log and linear_attn.norm.weight as stored (F32) instead of rounding them to bf16 as transformers does");
  tf::tools::add_max_memory_flag(c, max_memory);
  return [o, max_memory]() -> int {
    std::vector<std::string> prompts{tf::read_text_file(o->prompt_file)};
    tf::text::require_valid_utf8(prompts[0], "--prompt-file " + o->prompt_file);
    if (!o->negative_file.empty()) {
      prompts.push_back(tf::read_text_file(o->negative_file));
      tf::text::require_valid_utf8(prompts[1], "--negative-file " + o->negative_file);
    }
    const tf::Device device = tf::select_device(o->device);
    std::vector<tf::moss_image::EncodedPrompt> encoded;
    double load_s = 0, run_s = 0;
    {
      auto t0 = std::chrono::steady_clock::now();
      auto enc = tf::moss_image::PromptEncoder::load(o->model, {device, !o->keep_f32_params});
      auto t1 = std::chrono::steady_clock::now();
      std::fprintf(stderr, "encoder: %s\n", enc.encoder().config().summary().c_str());
      const std::string what = "--prompt-file " + o->prompt_file +
                               (o->negative_file.empty() ? "" : " and --negative-file " + o->negative_file);
      encoded = enc.encode(
          prompts, tf::terminal_progress("encode"),
          [&](int64_t tokens) {
            tf::moss_image::require_memory_for_tokens(enc.encoder().config(), tokens,
                                                      tf::tools::memory_limit(device, *max_memory), what);
          });
      load_s = std::chrono::duration<double>(t1 - t0).count();
      run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    }  // the encoder (weights, mappings, device memory) is gone before the output is written
    tf::release_cached_memory(device);  // so a later stage finds it free
    tf::NamedTensors out;
    const char* names[2] = {"prompt", "negative"};
    int64_t tokens = 0;
    for (size_t k = 0; k < encoded.size(); ++k) {
      out.emplace_back(std::string(names[k]) + ".ids", ids_tensor(encoded[k].ids));
      out.emplace_back(std::string(names[k]) + ".rows", encoded[k].rows);
      tokens += static_cast<int64_t>(encoded[k].ids.size());
      std::fprintf(stderr, "%s: %zu tokens\n", names[k], encoded[k].ids.size());
      if (encoded[k].dropped > 0)
        std::fprintf(stderr, "warning: %s: cut to %lld tokens as the official pipeline cuts it; %lld tokens dropped\n",
                     names[k], static_cast<long long>(tf::moss_image::kMaxPromptTokens),
                     static_cast<long long>(encoded[k].dropped));
    }
    tf::write_safetensors(o->out, out, {{"producer", "tf-moss-image encode"}, {"device", o->device}});
    std::fprintf(stderr, "load %.2f s, encode %.2f s (%.3f s/token over %lld tokens); %s\nwrote %s\n", load_s, run_s,
                 tokens ? run_s / tokens : 0.0, static_cast<long long>(tokens), peak_memory(device).c_str(), o->out.c_str());
    return 0;
  };
});

}  // namespace
