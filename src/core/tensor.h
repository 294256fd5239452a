#pragma once
// Tensors: contiguous row-major arrays with a dtype, a shape and a device; storage is shared and
// may be a mapped file, host memory or device memory.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace tf {

enum class Device : uint8_t { CPU, CUDA };
const char* device_name(Device d);

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);
int64_t shape_numel(const Shape& s);

struct Tensor {
  std::shared_ptr<void> storage;  // keeps `data` alive; may be null for borrowed views
  void* data = nullptr;
  DType dtype = DType::F32;
  Shape shape;
  Device device = Device::CPU;

  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t dim(int i) const { return shape.at(i < 0 ? shape.size() + i : i); }
  bool defined() const { return data != nullptr || numel() == 0; }
  template <class T> T* ptr() const { return static_cast<T*>(data); }
  std::string describe() const;  // "BF16 [4, 8] on cpu"

  // Rows [begin, end) of the leading axis, sharing storage.
  Tensor rows(int64_t begin, int64_t end) const;
  // The same bytes under another shape of equal element count.
  Tensor reshaped(Shape s) const;
};

// Fresh storage, uninitialised. CPU memory is 64-byte aligned.
Tensor empty(DType t, Shape s, Device d = Device::CPU);
Tensor zeros(DType t, Shape s, Device d = Device::CPU);

// A device backend registers how it allocates, frees and copies its memory.
struct DeviceMemoryHooks {
  std::function<void*(size_t)> alloc;
  std::function<void(void*)> free;
  std::function<void(void* dst, const void* src, size_t n, Device dst_dev, Device src_dev)> copy;
  std::function<void(void* dst, size_t n)> zero;
  // Optional: host memory the device copies into at full speed (pinned), for tensors copied back
  // from it; alloc_host may return nullptr, and the copy then lands in ordinary host memory.
  std::function<void*(size_t)> alloc_host;
  std::function<void(void*)> free_host;
};
void register_device_memory(Device d, DeviceMemoryHooks hooks);
bool device_available(Device d);

// Copies a tensor to a device (a no-op share when it is already there).
Tensor to_device(const Tensor& t, Device d);
// Copies bytes between tensors of equal dtype and shape on any devices.
void copy_into(Tensor& dst, const Tensor& src);

}  // namespace tf
