#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "core/error.h"

namespace tf {

const char* device_name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }

std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype)) + " " + shape_str(shape) + " on " + device_name(device);
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  require(rank() >= 1 && begin >= 0 && begin <= end && end <= shape[0], "tensor rows out of range");
  Tensor t = *this;
  size_t row_bytes = shape[0] ? nbytes() / shape[0] : 0;
  t.data = static_cast<char*>(data) + begin * row_bytes;
  t.shape[0] = end - begin;
  return t;
}

Tensor Tensor::reshaped(Shape s) const {
  require(shape_numel(s) == numel(), "cannot view " + describe() + " as " + shape_str(s));
  Tensor t = *this;
  t.shape = std::move(s);
  return t;
}

namespace {
std::map<Device, DeviceMemoryHooks>& hooks() {
  static std::map<Device, DeviceMemoryHooks> h;
  return h;
}
}  // namespace

void register_device_memory(Device d, DeviceMemoryHooks h) { hooks()[d] = std::move(h); }
bool device_available(Device d) { return d == Device::CPU || hooks().count(d) > 0; }

Tensor empty(DType t, Shape s, Device d) {
  for (int64_t v : s) require(v >= 0, "negative dimension in shape " + shape_str(s));
  Tensor x;
  x.dtype = t;
  x.shape = std::move(s);
  x.device = d;
  size_t n = x.nbytes();
  if (d == Device::CPU) {
    size_t rounded = (n + 63) / 64 * 64;
    void* p = rounded ? std::aligned_alloc(64, rounded) : nullptr;
    if (rounded && !p) throw OutOfMemory("out of host memory allocating " + x.describe());
    x.storage = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    x.data = p;
    return x;
  }
  auto it = hooks().find(d);
  require(it != hooks().end(), std::string("device ") + device_name(d) + " is not available in this build");
  void* p = n ? it->second.alloc(n) : nullptr;
  auto freer = it->second.free;
  x.storage = std::shared_ptr<void>(p, [freer](void* q) { if (q) freer(q); });
  x.data = p;
  return x;
}

Tensor zeros(DType t, Shape s, Device d) {
  Tensor x = empty(t, std::move(s), d);
  if (x.nbytes() == 0) return x;
  if (d == Device::CPU) std::memset(x.data, 0, x.nbytes());
  else hooks().at(d).zero(x.data, x.nbytes());
  return x;
}

void copy_into(Tensor& dst, const Tensor& src) {
  require(dst.dtype == src.dtype && dst.shape == src.shape,
          "copy between " + src.describe() + " and " + dst.describe());
  size_t n = src.nbytes();
  if (n == 0) return;
  if (dst.device == Device::CPU && src.device == Device::CPU) {
    std::memcpy(dst.data, src.data, n);
    return;
  }
  Device other = dst.device != Device::CPU ? dst.device : src.device;
  hooks().at(other).copy(dst.data, src.data, n, dst.device, src.device);
}

namespace {
// A host tensor for bytes coming back from device `from`: in the memory that device copies into
// fastest where it offers some.
Tensor empty_host_from(DType dt, const Shape& s, Device from) {
  const DeviceMemoryHooks& h = hooks().at(from);
  Tensor x;
  x.dtype = dt;
  x.shape = s;
  const size_t n = x.nbytes();
  void* p = n && h.alloc_host ? h.alloc_host(n) : nullptr;
  if (!p) return empty(dt, s, Device::CPU);
  auto freer = h.free_host;
  x.storage = std::shared_ptr<void>(p, [freer](void* q) { freer(q); });
  x.data = p;
  return x;
}
}  // namespace

Tensor to_device(const Tensor& t, Device d) {
  if (t.device == d) return t;
  Tensor out = d == Device::CPU ? empty_host_from(t.dtype, t.shape, t.device) : empty(t.dtype, t.shape, d);
  copy_into(out, t);
  return out;
}

}  // namespace tf
