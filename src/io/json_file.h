#pragma once
// JSON files read with errors that name the file and the key.
#include <nlohmann/json.hpp>
#include <string>

namespace tf {

using Json = nlohmann::json;

// Parses JSON nested at most kMaxJsonDepth deep (deeper nesting would overflow the stack of the
// library's recursive copy and dump); errors name `what`.
constexpr int kMaxJsonDepth = 128;
Json load_json_file(const std::string& path);
Json parse_json(const std::string& text, const std::string& what);

// A value as short text for error messages (long values cut with "...").
std::string json_brief(const Json& v);

// Typed reads of a key; errors name the file (`where`) and the key.
int64_t json_int(const Json& j, const std::string& key, const std::string& where);
int64_t json_int_or(const Json& j, const std::string& key, int64_t fallback, const std::string& where);
double json_number(const Json& j, const std::string& key, const std::string& where);
double json_number_or(const Json& j, const std::string& key, double fallback, const std::string& where);
bool json_bool_or(const Json& j, const std::string& key, bool fallback, const std::string& where);
std::string json_string_or(const Json& j, const std::string& key, const std::string& fallback,
                           const std::string& where);
std::vector<int64_t> json_int_list(const Json& j, const std::string& key, const std::string& where);

}  // namespace tf
