#include "io/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "io/json_file.h"

namespace tf {

namespace {

constexpr uint64_t kMaxHeader = 100u << 20;  // the reference library's own limit

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

TensorEntry parse_entry(const std::string& path, const std::string& name, const Json& e, uint64_t data_size) {
  std::string where = path + ": tensor \"" + name + "\"";
  if (!e.is_object()) fail(where + ": header entry must be an object");
  TensorEntry t;
  t.name = name;
  auto dt = e.find("dtype");
  if (dt == e.end() || !dt->is_string()) fail(where + ": missing \"dtype\" string");
  auto d = dtype_from_name(dt->get<std::string>());
  if (!d) fail(where + ": unknown dtype \"" + dt->get<std::string>() + "\" (expected BF16, F16, F32, F64, I8, I16, I32, I64, U8 or BOOL)");
  t.dtype = *d;
  auto sh = e.find("shape");
  if (sh == e.end() || !sh->is_array()) fail(where + ": missing \"shape\" list");
  uint64_t numel = 1;
  for (const Json& v : *sh) {
    if (!v.is_number_unsigned()) fail(where + ": shape entries must be non-negative integers, found " + json_brief(v));
    uint64_t dim = v.get<uint64_t>();
    if (dim > (uint64_t(1) << 48) || (dim && numel > std::numeric_limits<uint64_t>::max() / dim / 8))
      fail(where + ": shape " + json_brief(*sh) + " is absurdly large");
    numel *= dim;
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  auto off = e.find("data_offsets");
  if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    fail(where + ": \"data_offsets\" must be two non-negative integers");
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  if (t.begin > t.end) fail(where + ": data_offsets reversed [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]");
  if (t.end > data_size)
    fail(where + ": data_offsets end " + std::to_string(t.end) + " is past the data area of " +
         std::to_string(data_size) + " bytes (file truncated?)");
  uint64_t want = numel * dtype_size(t.dtype);
  if (t.end - t.begin != want)
    fail(where + ": " + std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape) + " needs " + std::to_string(want) +
         " bytes but data_offsets span " + std::to_string(t.end - t.begin));
  return t;
}

}  // namespace

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  auto f = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  auto file = MappedFile::open(path);
  f->path_ = path;
  f->keep_ = file;
  f->validate(file->data(), file->size());
  return f;
}

std::shared_ptr<SafetensorsFile> SafetensorsFile::parse(std::string bytes, const std::string& name) {
  auto f = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  auto owned = std::make_shared<std::string>(std::move(bytes));
  f->path_ = name;
  f->keep_ = owned;
  f->validate(reinterpret_cast<const uint8_t*>(owned->data()), owned->size());
  return f;
}

void SafetensorsFile::validate(const uint8_t* base, size_t size) {
  const std::string& path = path_;
  base_ = base;
  if (size < 8) fail(path + ": " + std::to_string(size) + " bytes, too short for a safetensors header (truncated?)");
  uint64_t n = read_u64_le(base);
  if (n > kMaxHeader) fail(path + ": header length " + std::to_string(n) + " exceeds the 100 MiB limit");
  if (n > size - 8) fail(path + ": header length " + std::to_string(n) + " runs past the end of the " + std::to_string(size) + "-byte file (truncated?)");
  std::string text(reinterpret_cast<const char*>(base + 8), n);
  Json h = parse_json(text, path + ": header");
  if (!h.is_object()) fail(path + ": header must be a JSON object");
  uint64_t data_size = size - 8 - n;
  data_area_ = base + 8 + n;
  std::vector<const TensorEntry*> order;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) fail(path + ": __metadata__ must be an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) fail(path + ": __metadata__ \"" + m.key() + "\" must be a string");
        metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    auto [pos, fresh] = entries_.emplace(it.key(), parse_entry(path, it.key(), *it, data_size));
    if (!fresh) fail(path + ": tensor \"" + it.key() + "\" appears twice");
  }
  for (auto& [k, v] : entries_) order.push_back(&v);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin < b->begin || (a->begin == b->begin && a->end < b->end); });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i]->begin < order[i - 1]->end)
      fail(path + ": tensors \"" + order[i - 1]->name + "\" and \"" + order[i]->name + "\" overlap in the data area");
  }
}

Tensor SafetensorsFile::get(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) fail(path() + ": no tensor \"" + name + "\"");
  Tensor t;
  t.dtype = it->second.dtype;
  t.shape = it->second.shape;
  t.device = Device::CPU;
  t.data = const_cast<uint8_t*>(data_area_ + it->second.begin);
  t.storage = std::shared_ptr<void>(std::const_pointer_cast<void>(keep_), const_cast<uint8_t*>(base_));
  // the format does not promise aligned offsets (nor a padded header): a misaligned view would be
  // read with misaligned loads, so such a tensor is copied
  if (reinterpret_cast<uintptr_t>(t.data) % dtype_size(t.dtype) != 0) {
    Tensor aligned = empty(t.dtype, t.shape);
    if (t.nbytes() > 0) std::memcpy(aligned.data, t.data, t.nbytes());
    return aligned;
  }
  return t;
}

void expect_tensor(const Tensor& t, const std::string& source, const std::string& name, DType dtype,
                   const Shape& shape) {
  if (t.dtype != dtype || t.shape != shape)
    fail(source + ": tensor \"" + name + "\" is " + std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape) +
         ", expected " + std::string(dtype_name(dtype)) + " " + shape_str(shape));
}

void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Json h = Json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (auto& [name, t] : tensors) {
    require(t.device == Device::CPU, path + ": tensor \"" + name + "\" must be on the CPU to be written");
    require(!h.contains(name), path + ": tensor \"" + name + "\" written twice");
    h[name] = {{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path + ": cannot write: " + std::strerror(errno));
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(uint64_t(header.size()) >> (8 * i));
  bool ok = std::fwrite(len, 1, 8, f) == 8 && std::fwrite(header.data(), 1, header.size(), f) == header.size();
  for (auto& [name, t] : tensors) {
    if (!ok) break;
    ok = t.nbytes() == 0 || std::fwrite(t.data, 1, t.nbytes(), f) == t.nbytes();
  }
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    fail(path + ": write failed: " + std::strerror(e));
  }
}

}  // namespace tf
