#pragma once
// A byte-level BPE tokenizer read from a Hugging Face tokenizer.json: added tokens first, then NFC,
// the file's Split regex, the byte-to-unicode map and BPE by merge rank, exactly as the reference
// library (tokenizers) encodes; anything the file asks for that this does not do is refused by name.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tf::text {

struct TokenizerSummary {
  size_t regular_tokens = 0;  // entries of the model's vocabulary
  size_t merges = 0;
  size_t added_tokens = 0;
  size_t id_limit = 0;        // one past the largest id
};

class Tokenizer {
 public:
  // `path`: tokenizer.json, or tokenizer.json.gz. Errors name the file and the key.
  static Tokenizer load(const std::string& path);
  // `json_text`: the file's content; `where` names it in errors.
  static Tokenizer from_json(const std::string& json_text, const std::string& where);

  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Ids of `text` (valid UTF-8, else an error naming the byte offset), no BOS or EOS added.
  std::vector<int32_t> encode(std::string_view text) const;

  // Text of `ids` as the reference decodes (byte-level tokens back to bytes, invalid UTF-8 as
  // U+FFFD); ids unknown to the tokenizer are skipped, as the reference skips them.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  int64_t token_to_id(std::string_view token) const;  // -1 when unknown
  std::string id_to_token(int32_t id) const;            // "" when unknown
  TokenizerSummary summary() const;

  // Forgets the cached words (for timing a first pass).
  void clear_cache() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// tokenizer.json for --model DIR: DIR/tokenizer/tokenizer.json in a pipeline folder (model_index.json),
// else DIR/tokenizer.json (a tokenizer or text encoder folder), else DIR/tokenizer/tokenizer.json;
// `.json.gz` beside any of them is accepted.
std::string find_tokenizer_file(const std::string& model_dir);

// Reads a file, inflating it when its name ends in .gz. Errors name the file.
std::string read_maybe_gzip(const std::string& path);

}  // namespace tf::text
