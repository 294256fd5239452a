#include "check/gate/case.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "io/safetensors.h"

namespace tf::check::gate {

namespace {

std::string dtypes_text(const std::vector<DType>& dtypes) {
  std::string s;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (i) s += i + 1 == dtypes.size() ? " or " : ", ";
    s += dtype_name(dtypes[i]);
  }
  return s;
}

std::string expected_text(const Expected& e) {
  std::string s = "expected " + dtypes_text(e.dtypes) + " " + (e.shape_text.empty() ? shape_str(e.shape) : e.shape_text);
  return e.why.empty() ? s : s + " (" + e.why + ")";
}

bool fits(const Tensor& t, const Expected& e) {
  if (std::find(e.dtypes.begin(), e.dtypes.end(), t.dtype) == e.dtypes.end()) return false;
  if (t.rank() != static_cast<int>(e.shape.size())) return false;
  for (int i = 0; i < t.rank(); ++i)
    if (e.shape[i] >= 0 ? t.dim(i) != e.shape[i] : t.dim(i) < 1) return false;
  return true;
}

}  // namespace

Case Case::open(const std::string& path, const std::string& component) {
  Case c;
  c.file_ = SafetensorsFile::open(path);
  c.path_ = path;
  const std::string kind = c.meta("kind");
  if (kind != kCaseKind)
    fail(path + ": metadata \"kind\" is \"" + kind + "\", expected \"" + kCaseKind +
         "\" (cases are written by python/cases/*_case.py)");
  c.component_ = c.meta("component");
  if (c.component_ != component)
    fail(path + ": metadata \"component\" is \"" + c.component_ + "\", expected \"" + component + "\"");
  const Json steps = c.meta_json("steps");
  if (!steps.is_array() || steps.empty()) fail(path + ": metadata \"steps\" must be a non-empty JSON array of step names");
  std::set<std::string> seen;
  for (const Json& s : steps) {
    if (!s.is_string() || s.get<std::string>().empty())
      fail(path + ": metadata \"steps\" holds " + json_brief(s) + ", expected a non-empty step name");
    if (!seen.insert(s.get<std::string>()).second)
      fail(path + ": metadata \"steps\" names \"" + s.get<std::string>() + "\" twice");
    c.steps_.push_back(s.get<std::string>());
  }
  c.reference_ = c.meta_json("reference");
  if (!c.reference_.is_object() || c.reference_.empty())
    fail(path + ": metadata \"reference\" must be a JSON object of library versions, e.g. {\"torch\": \"2.15.0\"}");
  for (const auto& [lib, version] : c.reference_.items())
    if (!version.is_string())
      fail(path + ": metadata \"reference\" gives \"" + lib + "\" as " + json_brief(version) + ", expected a version string");
  return c;
}

bool Case::has_step(const std::string& step) const { return std::find(steps_.begin(), steps_.end(), step) != steps_.end(); }

std::string Case::reference() const {
  std::string s;
  for (const auto& [lib, version] : reference_.items()) s += (s.empty() ? "" : ", ") + lib + " " + version.get<std::string>();
  return s;
}

std::string Case::meta(const std::string& key) const {
  auto it = file_->metadata().find(key);
  if (it == file_->metadata().end()) fail(path_ + ": the case's metadata has no \"" + key + "\"");
  return it->second;
}

bool Case::has_meta(const std::string& key) const { return file_->metadata().count(key) > 0; }

Json Case::meta_json(const std::string& key) const { return parse_json(meta(key), path_ + ": metadata \"" + key + "\""); }

bool Case::has(const std::string& tensor) const { return file_->has(tensor); }

Tensor Case::tensor(const std::string& name, const Expected& expected) const {
  if (!file_->has(name)) fail(path_ + ": the case has no tensor \"" + name + "\" (" + expected_text(expected) + ")");
  Tensor t = file_->get(name);
  if (!fits(t, expected)) fail(path_ + ": tensor \"" + name + "\" is " + t.describe() + ", " + expected_text(expected));
  return t;
}

Tensor Case::reference_output(const std::string& step, const Shape& shape, const std::string& why) const {
  return tensor("f32." + step, {{DType::F32, DType::F64}, shape, "", why});
}

std::optional<Tensor> Case::torch_bf16(const std::string& step, const Shape& shape, const std::string& why) const {
  if (!has("bf16." + step)) return std::nullopt;
  return tensor("bf16." + step, {{DType::BF16}, shape, "", why});
}

}  // namespace tf::check::gate
