#include <map>
#include <unordered_map>

#include "core/error.h"
#include "text/tokenizer_parts.h"

namespace tf::text {

namespace {
// GPT-2's pattern, which the ByteLevel pre-tokenizer applies itself when use_regex is true.
constexpr const char* kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

std::string type_of(const Json& j, const std::string& key, const std::string& where) {
  if (!j.is_object()) fail(where + ": " + key + " must be an object or null, found " + j.dump());
  auto it = j.find("type");
  if (it == j.end() || !it->is_string()) fail(where + ": " + key + " has no \"type\"");
  return it->get<std::string>();
}

bool flag(const Json& j, const char* name, bool fallback, const std::string& key, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail(where + ": " + key + "." + name + " must be true or false, found " + it->dump());
  return it->get<bool>();
}

void read_normalizer(const Json& n, const std::string& key, const std::string& where, TokenizerParts& parts) {
  if (n.is_null()) return;
  const std::string type = type_of(n, key, where);
  if (type == "NFC") {
    parts.nfc = true;
  } else if (type == "Sequence") {
    const Json& list = n.contains("normalizers") ? n["normalizers"] : Json();
    if (!list.is_array()) fail(where + ": " + key + ".normalizers must be a list");
    for (size_t i = 0; i < list.size(); ++i)
      read_normalizer(list[i], key + ".normalizers[" + std::to_string(i) + "]", where, parts);
  } else {
    fail(where + ": " + key + ".type \"" + type + "\" is not supported (supported: NFC, or a Sequence of NFC)");
  }
}

// Adds the pre-tokenizer's splits; returns true when it was the final ByteLevel.
bool read_pre_tokenizer(const Json& p, const std::string& key, const std::string& where, TokenizerParts& parts) {
  const std::string type = type_of(p, key, where);
  if (type == "Split") {
    const Json& pat = p.contains("pattern") ? p["pattern"] : Json();
    if (pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string()) {
      parts.splits.push_back({pat["Regex"].get<std::string>(), false});
    } else if (pat.is_object() && pat.contains("String") && pat["String"].is_string()) {
      const std::string lit = pat["String"].get<std::string>();
      if (lit.empty()) fail(where + ": " + key + ".pattern.String is empty (not supported)");
      parts.splits.push_back({lit, true});
    } else {
      fail(where + ": " + key + ".pattern must be {\"Regex\": ...} or {\"String\": ...}");
    }
    const Json& behavior = p.contains("behavior") ? p["behavior"] : Json();
    if (!behavior.is_string() || behavior.get<std::string>() != "Isolated")
      fail(where + ": " + key + ".behavior " + behavior.dump() + " is not supported (supported: \"Isolated\")");
    if (flag(p, "invert", false, key, where)) fail(where + ": " + key + ".invert = true is not supported");
    return false;
  }
  if (type == "ByteLevel") {
    if (flag(p, "add_prefix_space", true, key, where))
      fail(where + ": " + key + ".add_prefix_space = true is not supported");
    if (flag(p, "use_regex", true, key, where)) parts.splits.push_back({kGpt2Pattern, false});
    return true;
  }
  fail(where + ": " + key + ".type \"" + type + "\" is not supported (supported: Split, ByteLevel, Sequence)");
}

void read_model(const Json& m, const std::string& where, TokenizerParts& parts) {
  if (m.is_null()) fail(where + ": model is missing");
  const std::string type = type_of(m, "model", where);
  if (type != "BPE") fail(where + ": model.type \"" + type + "\" is not supported (supported: BPE)");
  if (m.contains("dropout") && !m["dropout"].is_null()) {
    if (!m["dropout"].is_number() || m["dropout"].get<double>() != 0.0)
      fail(where + ": model.dropout " + m["dropout"].dump() + " is not supported (supported: null)");
  }
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (m.contains(k) && !m[k].is_null() && !(m[k].is_string() && m[k].get<std::string>().empty()))
      fail(where + ": model." + k + " " + m[k].dump() + " is not supported (supported: null or \"\")");
  }
  if (flag(m, "byte_fallback", false, "model", where)) fail(where + ": model.byte_fallback = true is not supported");
  parts.bpe.fuse_unk = flag(m, "fuse_unk", false, "model", where);
  parts.bpe.ignore_merges = flag(m, "ignore_merges", false, "model", where);
  if (m.contains("unk_token") && !m["unk_token"].is_null()) {
    if (!m["unk_token"].is_string()) fail(where + ": model.unk_token must be a string or null");
    parts.unk_token = m["unk_token"].get<std::string>();
  }

  const Json& vocab = m.contains("vocab") ? m["vocab"] : Json();
  if (!vocab.is_object()) fail(where + ": model.vocab must be an object of token -> id");
  parts.vocab.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_unsigned() || it.value().get<uint64_t>() > 0xFFFFFFFFu)
      fail(where + ": model.vocab[\"" + it.key() + "\"] must be an id (a non-negative integer), found " + it.value().dump());
    parts.vocab.emplace_back(it.key(), uint32_t(it.value().get<uint64_t>()));
  }

  const Json& merges = m.contains("merges") ? m["merges"] : Json();
  if (!merges.is_array()) fail(where + ": model.merges must be a list");
  parts.merges.reserve(merges.size());
  size_t rank = 0;
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json& e = merges[i];
    const std::string at = where + ": model.merges[" + std::to_string(i) + "]";
    if (e.is_string()) {
      const std::string line = e.get<std::string>();
      if (line.rfind("#version", 0) == 0) continue;  // the reference skips these header lines
      const size_t sp = line.find(' ');
      if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
        fail(at + " \"" + line + "\" must be two tokens separated by one space (merge " + std::to_string(rank + 1) + ")");
      parts.merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      parts.merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    } else {
      fail(at + " must be \"left right\" or [\"left\", \"right\"], found " + e.dump());
    }
    ++rank;
  }
}

void read_added_tokens(const Json& list, const std::string& where, TokenizerParts& parts) {
  if (list.is_null()) return;
  if (!list.is_array()) fail(where + ": added_tokens must be a list");
  // ids as the reference assigns them on load: a string already known keeps its id, a new one
  // takes the next id after the vocabulary (the file's "id" is only checked)
  std::unordered_map<std::string, uint32_t> model_ids;
  model_ids.reserve(parts.vocab.size());
  for (const auto& [tok, id] : parts.vocab) model_ids[tok] = id;
  uint32_t next_id = uint32_t(model_ids.size());
  std::unordered_map<std::string, uint32_t> added_ids;
  std::map<uint32_t, AddedToken> by_id;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& t = list[i];
    const std::string at = where + ": added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object()) fail(at + " must be an object");
    auto need = [&](const char* k) -> const Json& {
      if (!t.contains(k)) fail(at + " has no \"" + std::string(k) + "\"");
      return t[k];
    };
    AddedToken tok;
    if (!need("content").is_string()) fail(at + ".content must be a string");
    tok.content = t["content"].get<std::string>();
    if (!need("id").is_number_unsigned()) fail(at + ".id must be a non-negative integer");
    const uint64_t file_id = t["id"].get<uint64_t>();
    auto boolean = [&](const char* k) {
      if (!need(k).is_boolean()) fail(at + "." + k + " must be true or false");
      return t[k].get<bool>();
    };
    tok.single_word = boolean("single_word");
    tok.lstrip = boolean("lstrip");
    tok.rstrip = boolean("rstrip");
    tok.normalized = boolean("normalized");
    tok.special = boolean("special");
    if (tok.content.empty()) continue;  // the reference ignores empty tokens
    uint32_t id;
    if (auto a = added_ids.find(tok.content); a != added_ids.end()) {
      id = a->second;
    } else if (auto v = model_ids.find(tok.content); v != model_ids.end()) {
      id = v->second;
    } else {
      id = next_id++;
    }
    if (file_id != id)
      fail(at + " (\"" + tok.content + "\") has id " + std::to_string(file_id) + " but the reference library gives it id " +
           std::to_string(id) + " (after the vocabulary's " + std::to_string(model_ids.size()) + " entries)");
    tok.id = id;
    added_ids[tok.content] = id;
    by_id[id] = tok;
  }
  for (auto& [id, tok] : by_id) parts.added.push_back(tok);
}
}  // namespace

TokenizerParts read_tokenizer_json(const Json& j, const std::string& where) {
  if (!j.is_object()) fail(where + ": expected a JSON object (a tokenizer.json)");
  TokenizerParts parts;
  if (j.contains("version") && !(j["version"].is_string() && j["version"].get<std::string>() == "1.0"))
    fail(where + ": version " + j["version"].dump() + " is not supported (supported: \"1.0\")");
  for (const char* k : {"truncation", "padding"})
    if (j.contains(k) && !j[k].is_null()) fail(where + ": " + k + " is not supported (it must be null)");
  if (j.contains("normalizer")) read_normalizer(j["normalizer"], "normalizer", where, parts);

  const Json& pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : Json();
  if (pre.is_null()) fail(where + ": pre_tokenizer is missing (a byte-level BPE needs a ByteLevel pre-tokenizer)");
  bool byte_level = false;
  if (type_of(pre, "pre_tokenizer", where) == "Sequence") {
    const Json& list = pre.contains("pretokenizers") ? pre["pretokenizers"] : Json();
    if (!list.is_array()) fail(where + ": pre_tokenizer.pretokenizers must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]";
      if (byte_level) fail(where + ": " + key + " follows the ByteLevel pre-tokenizer (not supported: ByteLevel must come last)");
      byte_level = read_pre_tokenizer(list[i], key, where, parts);
    }
  } else {
    byte_level = read_pre_tokenizer(pre, "pre_tokenizer", where, parts);
  }
  if (!byte_level) fail(where + ": pre_tokenizer has no ByteLevel step (only byte-level BPE is supported)");

  const Json& post = j.contains("post_processor") ? j["post_processor"] : Json();
  if (!post.is_null()) {
    const std::string type = type_of(post, "post_processor", where);
    if (type != "ByteLevel")
      fail(where + ": post_processor.type \"" + type + "\" is not supported (supported: ByteLevel or null; others add tokens)");
  }
  const Json& dec = j.contains("decoder") ? j["decoder"] : Json();
  if (!dec.is_null()) {
    const std::string type = type_of(dec, "decoder", where);
    if (type != "ByteLevel") fail(where + ": decoder.type \"" + type + "\" is not supported (supported: ByteLevel or null)");
    parts.byte_level_decoder = true;
  }

  read_model(j.contains("model") ? j["model"] : Json(), where, parts);
  read_added_tokens(j.contains("added_tokens") ? j["added_tokens"] : Json(), where, parts);
  return parts;
}

}  // namespace tf::text
