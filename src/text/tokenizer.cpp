#include "text/tokenizer.h"

#include <zlib.h>

#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/mapped_file.h"
#include "text/byte_level.h"
#include "text/nfc.h"
#include "text/onig_regex.h"
#include "text/regex_reference_classes.h"
#include "text/tokenizer_parts.h"
#include "text/utf8.h"

namespace tf::text {

namespace fs = std::filesystem;

struct Tokenizer::Impl {
  TokenizerParts parts;
  std::unique_ptr<BpeModel> model;
  std::vector<std::unique_ptr<OnigRegex>> regexes;  // per split step; null for literals
  std::unique_ptr<AddedTokenMatcher> raw_matcher, normalized_matcher;
  std::unordered_map<uint32_t, std::string> added_decode_form;  // id -> string decode sees
  std::unordered_set<std::string> special_contents;
  std::unordered_map<std::string, uint32_t> added_ids;

  void pre_tokenize(std::string_view text, size_t step, std::vector<uint32_t>& out) const;
  void encode_plain(std::string_view normalized, std::vector<uint32_t>& out) const;
};

// Splits `text` with step `step` (Isolated: matches and the text between them are pieces), then
// the next step on each piece; the last pieces go to BPE.
void Tokenizer::Impl::pre_tokenize(std::string_view text, size_t step, std::vector<uint32_t>& out) const {
  if (text.empty()) return;
  if (step == parts.splits.size()) {
    model->encode_word(text, out);
    return;
  }
  size_t prev = 0;
  auto piece = [&](size_t s, size_t e) {
    if (prev < s) pre_tokenize(text.substr(prev, s - prev), step + 1, out);
    if (s < e) pre_tokenize(text.substr(s, e - s), step + 1, out);
    prev = e;
  };
  if (parts.splits[step].literal) {
    const std::string& lit = parts.splits[step].pattern;
    for (size_t at = text.find(lit); at != std::string_view::npos; at = text.find(lit, at + lit.size()))
      piece(at, at + lit.size());
  } else {
    regexes[step]->for_each_match(text, piece);
  }
  if (prev < text.size()) pre_tokenize(text.substr(prev), step + 1, out);
}

void Tokenizer::Impl::encode_plain(std::string_view normalized, std::vector<uint32_t>& out) const {
  if (normalized_matcher->empty()) {
    pre_tokenize(normalized, 0, out);
    return;
  }
  std::vector<Piece> pieces;
  normalized_matcher->split(normalized, pieces);
  for (const Piece& p : pieces) {
    if (p.id >= 0)
      out.push_back(uint32_t(p.id));
    else
      pre_tokenize(normalized.substr(p.begin, p.end - p.begin), 0, out);
  }
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Tokenizer Tokenizer::from_json(const std::string& json_text, const std::string& where) {
  auto impl = std::make_unique<Impl>();
  TokenizerParts& parts = impl->parts;
  parts = read_tokenizer_json(parse_json(json_text, where), where);
  for (size_t i = 0; i < parts.splits.size(); ++i)
    impl->regexes.push_back(parts.splits[i].literal
                                ? nullptr
                                : std::make_unique<OnigRegex>(with_reference_unicode_classes(parts.splits[i].pattern),
                                                              where + ": pre_tokenizer Split regex"));
  auto vocab = parts.vocab;
  impl->model = std::make_unique<BpeModel>(std::move(vocab), parts.merges, parts.bpe, where);
  if (!parts.unk_token.empty()) {
    const int64_t unk = impl->model->id_of(parts.unk_token);
    if (unk < 0) fail(where + ": model.unk_token \"" + parts.unk_token + "\" is not in the vocabulary");
    parts.bpe.unk_id = unk;
    vocab = parts.vocab;
    impl->model = std::make_unique<BpeModel>(std::move(vocab), parts.merges, parts.bpe, where);
  }
  parts.vocab.clear();  // the model holds the vocabulary now
  parts.vocab.shrink_to_fit();

  std::vector<AddedToken> raw, normalized;
  std::vector<std::string> raw_text, normalized_text;
  std::unordered_set<std::string> seen_normalized;
  for (const AddedToken& t : parts.added) {
    std::string form = t.content;
    if (t.normalized && parts.nfc) form = nfc(t.content);
    impl->added_decode_form[t.id] = form;
    impl->added_ids[t.content] = t.id;
    if (t.special) impl->special_contents.insert(t.content);
    if (t.normalized) {
      if (!seen_normalized.insert(form).second)
        fail(where + ": added token \"" + t.content + "\" normalises to the same text as another added token");
      normalized.push_back(t);
      normalized_text.push_back(form);
    } else {
      raw.push_back(t);
      raw_text.push_back(form);
    }
  }
  impl->raw_matcher = std::make_unique<AddedTokenMatcher>(raw, raw_text);
  impl->normalized_matcher = std::make_unique<AddedTokenMatcher>(normalized, normalized_text);
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::load(const std::string& path) { return from_json(read_maybe_gzip(path), path); }

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  require_valid_utf8(text, "text to tokenize");
  const Impl& im = *impl_;
  std::vector<uint32_t> ids;
  ids.reserve(text.size() / 3 + 8);
  std::vector<Piece> pieces;
  im.raw_matcher->split(text, pieces);
  std::string normalized;
  for (const Piece& p : pieces) {
    if (p.id >= 0) {
      ids.push_back(uint32_t(p.id));
      continue;
    }
    const std::string_view plain = text.substr(p.begin, p.end - p.begin);
    if (!im.parts.nfc || nfc_unchanged(plain)) {
      im.encode_plain(plain, ids);
    } else {
      normalized.clear();
      append_nfc(plain, normalized);
      im.encode_plain(normalized, ids);
    }
  }
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const Impl& im = *impl_;
  std::vector<const std::string*> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0) continue;
    const std::string* tok = nullptr;
    if (auto a = im.added_decode_form.find(uint32_t(id)); a != im.added_decode_form.end())
      tok = &a->second;
    else
      tok = im.model->token_of(uint32_t(id));
    if (!tok) continue;  // unknown ids are skipped, as the reference skips them
    if (skip_special_tokens && im.special_contents.count(*tok)) continue;
    tokens.push_back(tok);
  }
  std::string out;
  if (!im.parts.byte_level_decoder) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out.push_back(' ');
      out += *tokens[i];
    }
    return out;
  }
  std::string bytes;
  for (const std::string* t : tokens)
    if (!from_byte_level(*t, bytes)) bytes += *t;  // a token outside the byte map stays as written
  return utf8_lossy(bytes);
}

int64_t Tokenizer::token_to_id(std::string_view token) const {
  if (auto a = impl_->added_ids.find(std::string(token)); a != impl_->added_ids.end()) return a->second;
  return impl_->model->id_of(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  if (id < 0) return {};
  if (auto a = impl_->added_decode_form.find(uint32_t(id)); a != impl_->added_decode_form.end()) return a->second;
  const std::string* t = impl_->model->token_of(uint32_t(id));
  return t ? *t : std::string();
}

void Tokenizer::clear_cache() const { impl_->model->clear_cache(); }

TokenizerSummary Tokenizer::summary() const {
  TokenizerSummary s;
  s.regular_tokens = impl_->model->vocab_entries();
  s.merges = impl_->model->merge_count();
  s.added_tokens = impl_->parts.added.size();
  size_t limit = impl_->model->id_limit();
  for (const auto& t : impl_->parts.added) limit = std::max(limit, size_t(t.id) + 1);
  s.id_limit = limit;
  return s;
}

std::string read_maybe_gzip(const std::string& path) {
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (!gz) return read_text_file(path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail(path + ": cannot open");
  std::string out;
  char buf[1 << 16];
  while (true) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      fail(path + ": not a readable gzip file (" + msg + ")");
    }
    if (n == 0) break;
    out.append(buf, size_t(n));
    if (out.size() > (size_t(1) << 30)) {
      gzclose(f);
      fail(path + ": inflates to more than 1 GiB");
    }
  }
  // a truncated stream reads as a short file without error; gzclose reports it
  const int rc = gzclose(f);
  if (rc != Z_OK) fail(path + ": gzip stream is truncated or corrupt");
  return out;
}

std::string find_tokenizer_file(const std::string& model_dir) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) fail("--model " + model_dir + ": not a folder");
  const fs::path dir(model_dir);
  std::vector<fs::path> candidates;
  if (fs::exists(dir / "model_index.json", ec)) {
    candidates = {dir / "tokenizer" / "tokenizer.json"};
  } else {
    candidates = {dir / "tokenizer.json", dir / "tokenizer" / "tokenizer.json"};
  }
  for (const fs::path& c : candidates) {
    if (fs::is_regular_file(c, ec)) return c.string();
    fs::path gz = c;
    gz += ".gz";
    if (fs::is_regular_file(gz, ec)) return gz.string();
  }
  std::string tried;
  for (const fs::path& c : candidates) tried += (tried.empty() ? "" : ", ") + c.string();
  fail("--model " + model_dir + ": no tokenizer file (looked for " + tried + ", and .gz of each)");
}

}  // namespace tf::text
