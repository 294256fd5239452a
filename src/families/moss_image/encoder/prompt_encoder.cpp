#include "families/moss_image/encoder/prompt_encoder.h"

#include "core/error.h"
#include "io/checkpoint.h"

namespace tf::moss_image {

PromptEncoder PromptEncoder::load(const std::string& model_dir, const LoadOptions& options) {
  std::string tok_path = text::find_tokenizer_file(model_dir);
  text::Tokenizer tok = text::Tokenizer::load(tok_path);
  Encoder enc = Encoder::load(resolve_component(model_dir, "text_encoder"), options);
  return PromptEncoder(std::move(enc), std::move(tok), std::move(tok_path));
}

std::vector<int32_t> PromptEncoder::tokenize(const std::string& prompt, bool chat) const {
  return tokenizer_.encode(chat ? chat_.apply(prompt) : prompt);
}

std::vector<EncodedPrompt> PromptEncoder::encode(const std::vector<std::string>& prompts,
                                                 const Progress& progress,
                                                 const std::function<void(int64_t tokens)>& before_forward,
                                                 Device rows_device) const {
  std::vector<EncodedPrompt> out;
  std::vector<int32_t> packed;
  SeqOffsets offsets{0};
  for (const std::string& p : prompts) {
    EncodedPrompt e;
    e.ids = tokenize(p);
    if (static_cast<int64_t>(e.ids.size()) > kMaxPromptTokens) {
      e.dropped = static_cast<int64_t>(e.ids.size()) - kMaxPromptTokens;
      e.ids.resize(kMaxPromptTokens);
    }
    const EncoderConfig& cfg = encoder_.config();
    if (static_cast<int64_t>(e.ids.size()) > cfg.max_positions)
      fail("prompt " + std::to_string(out.size() + 1) + " is " + std::to_string(e.ids.size()) +
           " tokens, more than the model's max_position_embeddings " + std::to_string(cfg.max_positions) + " (" +
           cfg.source + ")");
    packed.insert(packed.end(), e.ids.begin(), e.ids.end());
    offsets.push_back(static_cast<int64_t>(packed.size()));
    out.push_back(std::move(e));
  }
  if (before_forward) before_forward(static_cast<int64_t>(packed.size()));
  Tensor rows = encoder_.forward(packed, offsets, progress, rows_device);
  for (size_t k = 0; k < out.size(); ++k) {
    Tensor r = empty(DType::BF16, {offsets[k + 1] - offsets[k], encoder_.config().hidden}, rows_device);
    copy_into(r, rows.rows(offsets[k], offsets[k + 1]));  // own storage, so the packed rows can go
    out[k].rows = r;
  }
  return out;
}

}  // namespace tf::moss_image
