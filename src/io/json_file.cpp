#include "io/json_file.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "core/mapped_file.h"

namespace tf {

namespace {
// The deepest nesting of arrays and objects in `text`, outside strings; stops past `limit`.
int nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

std::string json_brief(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

Json parse_json(const std::string& text, const std::string& what) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    fail(what + ": JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    std::string why = e.what();  // may quote a whole long token: keep the line short
    fail(what + ": not valid JSON: " + (why.size() > 200 ? why.substr(0, 197) + "..." : why));
  }
}

Json load_json_file(const std::string& path) { return parse_json(read_text_file(path, 512u << 20), path); }

namespace {
const Json& field(const Json& j, const std::string& key, const std::string& where) {
  if (!j.is_object()) fail(where + ": expected a JSON object holding \"" + key + "\"");
  auto it = j.find(key);
  if (it == j.end()) fail(where + ": missing \"" + key + "\"");
  return *it;
}

// An optional field left out or set to null: the *_or readers fall back.
bool absent(const Json& j, const std::string& key) { return !j.is_object() || !j.contains(key) || j.at(key).is_null(); }
}  // namespace

int64_t json_int(const Json& j, const std::string& key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_number_integer()) fail(where + ": \"" + key + "\" must be an integer, found " + json_brief(v));
  // nlohmann keeps 2^63 .. 2^64-1 as unsigned; read as int64 they would wrap to negatives
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail(where + ": \"" + key + "\" is " + json_brief(v) + ", past the largest integer (" +
         std::to_string(INT64_MAX) + ")");
  return v.get<int64_t>();
}

int64_t json_int_or(const Json& j, const std::string& key, int64_t fallback, const std::string& where) {
  if (absent(j, key)) return fallback;
  return json_int(j, key, where);
}

double json_number(const Json& j, const std::string& key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_number()) fail(where + ": \"" + key + "\" must be a number, found " + json_brief(v));
  return v.get<double>();
}

double json_number_or(const Json& j, const std::string& key, double fallback, const std::string& where) {
  if (absent(j, key)) return fallback;
  return json_number(j, key, where);
}

bool json_bool_or(const Json& j, const std::string& key, bool fallback, const std::string& where) {
  if (absent(j, key)) return fallback;
  const Json& v = j.at(key);
  if (!v.is_boolean()) fail(where + ": \"" + key + "\" must be true or false, found " + json_brief(v));
  return v.get<bool>();
}

std::string json_string_or(const Json& j, const std::string& key, const std::string& fallback,
                           const std::string& where) {
  if (absent(j, key)) return fallback;
  const Json& v = j.at(key);
  if (!v.is_string()) fail(where + ": \"" + key + "\" must be a string, found " + json_brief(v));
  return v.get<std::string>();
}

std::vector<int64_t> json_int_list(const Json& j, const std::string& key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_array()) fail(where + ": \"" + key + "\" must be a list of integers");
  std::vector<int64_t> out;
  for (const Json& e : v) {
    if (!e.is_number_integer()) fail(where + ": \"" + key + "\" must be a list of integers, found " + json_brief(e));
    out.push_back(e.get<int64_t>());
  }
  return out;
}

}  // namespace tf
