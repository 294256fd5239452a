#pragma once
// MOSS-Image's prompt encoding end to end: the pipeline's chat format -> the native tokenizer ->
// one forward of all prompts packed along the token axis -> each prompt's final-norm rows.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "families/moss_image/encoder/encoder.h"
#include "text/chat_format.h"
#include "text/tokenizer.h"

namespace tf::moss_image {

// The official pipeline's tokenizer call truncates each prompt to this many tokens.
constexpr int64_t kMaxPromptTokens = 4096;

struct EncodedPrompt {
  std::vector<int32_t> ids;  // at most kMaxPromptTokens
  Tensor rows;               // BF16 [ids.size(), hidden] on the CPU (or where encode was asked to leave them)
  int64_t dropped = 0;       // tokens cut from the end to fit kMaxPromptTokens
};

class PromptEncoder {
 public:
  // `model_dir`: a pipeline folder (model_index.json with text_encoder/ and tokenizer/) or a text
  // encoder folder with its tokenizer beside it.
  static PromptEncoder load(const std::string& model_dir, const LoadOptions& options);

  // Ids of a prompt in the chat format (or as raw text).
  std::vector<int32_t> tokenize(const std::string& prompt, bool chat = true) const;

  // All prompts in one pass over the weights; each gets its own ids and rows, its ids cut to
  // kMaxPromptTokens as the official pipeline cuts them (EncodedPrompt::dropped says how many). `before_forward`
  // (optional) sees the packed token count once every prompt is tokenized and may refuse it.
  // `rows_device`: where each prompt's rows are returned (the CPU, or the encoder's own device).
  std::vector<EncodedPrompt> encode(const std::vector<std::string>& prompts, const Progress& progress = {},
                                    const std::function<void(int64_t tokens)>& before_forward = {},
                                    Device rows_device = Device::CPU) const;

  const Encoder& encoder() const { return encoder_; }
  const text::ChatFormat& chat_format() const { return chat_; }
  const std::string& tokenizer_path() const { return tokenizer_path_; }

 private:
  PromptEncoder(Encoder encoder, text::Tokenizer tokenizer, std::string tokenizer_path)
      : encoder_(std::move(encoder)), tokenizer_(std::move(tokenizer)), tokenizer_path_(std::move(tokenizer_path)) {}
  Encoder encoder_;
  text::Tokenizer tokenizer_;
  std::string tokenizer_path_;
  text::ChatFormat chat_;
};

}  // namespace tf::moss_image
