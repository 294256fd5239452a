#pragma once
// The pipeline's chat format around a prompt: prefix + prompt + suffix, tokenized as one text.
#include <string>
#include <string_view>

namespace tf::text {

struct ChatFormat {
  // MOSS-Image's default: a user turn, then an assistant turn opened with thinking.
  std::string prefix = "<|im_start|>user\n";
  std::string suffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n";

  std::string apply(std::string_view prompt) const {
    std::string s;
    s.reserve(prefix.size() + prompt.size() + suffix.size());
    s.append(prefix).append(prompt).append(suffix);
    return s;
  }
};

}  // namespace tf::text
