// tf-moss-image tokenize: a prompt file -> its token ids as a JSON array (chat format unless --raw);
// --lines: one prompt per line, one JSON array per line (for batch comparisons).
#include <cstdio>
#include <string>

#include "common/command.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "text/chat_format.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace {

std::string ids_json(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  s += ']';
  return s;
}

// Splits on "\n" only, so a "\r" before it stays part of the line.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

tf::tools::RegisterCommand reg("tokenize", "Print a prompt's token ids as a JSON array", [](CLI::App& c) {
  struct Opts {
    std::string tokenizer, model, prompt_file;
    bool raw = false, lines = false;
  };
  auto o = std::make_shared<Opts>();
  auto* tok = c.add_option("--tokenizer", o->tokenizer, "tokenizer.json (or .json.gz)");
  auto* model = c.add_option("--model", o->model, "pipeline folder (model_index.json) or tokenizer/text encoder folder");
  tok->excludes(model);
  c.add_option("--prompt-file", o->prompt_file, "UTF-8 text file holding the prompt")->required();
  c.add_flag("--raw", o->raw, "tokenize the file's text as is, without the chat format");
  c.add_flag("--lines", o->lines, "one prompt per line (split on \\n); prints one JSON array per line");
  return [o]() -> int {
    if (o->tokenizer.empty() && o->model.empty()) tf::fail("--tokenizer FILE or --model DIR is required");
    const std::string path = o->tokenizer.empty() ? tf::text::find_tokenizer_file(o->model) : o->tokenizer;
    const std::string text = tf::read_text_file(o->prompt_file);
    tf::text::require_valid_utf8(text, "--prompt-file " + o->prompt_file);
    const tf::text::Tokenizer tokenizer = tf::text::Tokenizer::load(path);
    const tf::text::ChatFormat chat;
    std::string out;
    if (o->lines) {
      for (std::string_view line : split_lines(text))
        out += ids_json(tokenizer.encode(o->raw ? std::string(line) : chat.apply(line))) + "\n";
    } else {
      out = ids_json(tokenizer.encode(o->raw ? text : chat.apply(text))) + "\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  };
});

}  // namespace
