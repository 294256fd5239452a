#pragma once
// A small byte-level BPE tokenizer.json built in the test: bytes 0..255 are ids 0..255 (through the
// byte-to-unicode map), eight merges, five added tokens with every flag. Expected ids in the tests
// were produced by the reference library (tokenizers 0.23.3) from the same JSON.
#include <string>

#include "io/json_file.h"
#include "text/byte_level.h"
#include "text/utf8.h"

namespace tf::text::testing {

inline std::string byte_char(int b) {
  std::string s;
  append_utf8(s, byte_to_code_point()[size_t(b)]);
  return s;
}

inline Json mini_tokenizer_json(bool string_merges = true) {
  Json vocab = Json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_char(b)] = b;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"a", "b"}, {"b", "c"}, {"ab", "c"}, {"\xC4\xA0", "a"}, {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}};
  Json merge_list = Json::array();
  for (const auto& [a, b] : merges) {
    if (!vocab.contains(a + b)) vocab[a + b] = vocab.size();
    if (string_merges)
      merge_list.push_back(a + " " + b);
    else
      merge_list.push_back(Json::array({a, b}));
  }
  auto added = [](int id, const char* content, bool special, bool normalized, bool lstrip, bool rstrip, bool single_word) {
    return Json{{"id", id},           {"content", content}, {"special", special},        {"normalized", normalized},
                {"lstrip", lstrip}, {"rstrip", rstrip},   {"single_word", single_word}};
  };
  const int n = int(vocab.size());
  Json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", Json::array({added(n, "<s>", true, false, true, false, false),
                                    added(n + 1, "[X]", false, false, false, true, false),
                                    added(n + 2, "word", false, true, false, false, true),
                                    added(n + 3, "e\xCC\x81t", false, true, false, false, false),
                                    added(n + 4, "<s>x", true, false, false, false, false)})},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         Json::array({{{"type", "Split"},
                       {"pattern", {{"Regex", " ?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+|\\s+"}}},
                       {"behavior", "Isolated"},
                       {"invert", false}},
                      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}})}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merge_list}}},
  };
  return j;
}

}  // namespace tf::text::testing
