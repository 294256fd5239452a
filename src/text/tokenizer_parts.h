#pragma once
// What a tokenizer.json asks for, read and checked: the pieces Tokenizer is built from.
#include <string>
#include <utility>
#include <vector>

#include "io/json_file.h"
#include "text/added_tokens.h"
#include "text/bpe.h"

namespace tf::text {

// One Split (Isolated) step: a regex, or a literal string.
struct SplitStep {
  std::string pattern;
  bool literal = false;
};

struct TokenizerParts {
  bool nfc = false;                         // the normaliser: NFC or none
  std::vector<SplitStep> splits;            // applied in order
  bool byte_level_decoder = false;          // else tokens are joined with spaces, as the reference does
  std::vector<std::pair<std::string, uint32_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
  BpeSettings bpe;
  std::string unk_token;                    // resolved to bpe.unk_id once the vocabulary is known
  std::vector<AddedToken> added;            // in id order, ids as the reference assigns them
};

// Errors name `where` and the key (e.g. "tokenizer.json: model.type \"WordPiece\" is not supported").
TokenizerParts read_tokenizer_json(const Json& j, const std::string& where);

}  // namespace tf::text
