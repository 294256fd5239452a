#include "io/json_file.h"

#include "core/error.h"
#include "core/mapped_file.h"

namespace tf {

Json parse_json(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail(what + ": not valid JSON: " + e.what());
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
}  // namespace

int64_t json_int(const Json& j, const std::string& key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_number_integer()) fail(where + ": \"" + key + "\" must be an integer, found " + v.dump());
  return v.get<int64_t>();
}

int64_t json_int_or(const Json& j, const std::string& key, int64_t fallback, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  return json_int(j, key, where);
}

double json_number(const Json& j, const std::string& key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_number()) fail(where + ": \"" + key + "\" must be a number, found " + v.dump());
  return v.get<double>();
}

double json_number_or(const Json& j, const std::string& key, double fallback, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  return json_number(j, key, where);
}

bool json_bool_or(const Json& j, const std::string& key, bool fallback, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  const Json& v = j.at(key);
  if (!v.is_boolean()) fail(where + ": \"" + key + "\" must be true or false, found " + v.dump());
  return v.get<bool>();
}

std::string json_string_or(const Json& j, const std::string& key, const std::string& fallback,
                           const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return fallback;
  const Json& v = j.at(key);
  if (!v.is_string()) fail(where + ": \"" + key + "\" must be a string, found " + v.dump());
  return v.get<std::string>();
}

std::vector<int64_t> json_int_list(const Json& j, const std::string& key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_array()) fail(where + ": \"" + key + "\" must be a list of integers");
  std::vector<int64_t> out;
  for (const Json& e : v) {
    if (!e.is_number_integer()) fail(where + ": \"" + key + "\" must be a list of integers, found " + e.dump());
    out.push_back(e.get<int64_t>());
  }
  return out;
}

}  // namespace tf
