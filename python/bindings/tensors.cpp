#include "tensors.h"

#include <cstring>
#include <memory>

#include "core/dtype.h"
#include "errors.h"

namespace tfpy {

namespace {

nb::dlpack::dtype dlpack_dtype(tf::DType t) {
  using C = nb::dlpack::dtype_code;
  auto d = [](C code, int bits) { return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1}; };
  switch (t) {
    case tf::DType::BF16: return d(C::Bfloat, 16);
    case tf::DType::F16: return d(C::Float, 16);
    case tf::DType::F32: return d(C::Float, 32);
    case tf::DType::F64: return d(C::Float, 64);
    case tf::DType::I8: return d(C::Int, 8);
    case tf::DType::I16: return d(C::Int, 16);
    case tf::DType::I32: return d(C::Int, 32);
    case tf::DType::I64: return d(C::Int, 64);
    case tf::DType::U8: return d(C::UInt, 8);
    case tf::DType::BOOL: return d(C::Bool, 8);
  }
  throw tf::Error("unknown dtype");
}

std::string dtype_str(nb::dlpack::dtype d) {
  using C = nb::dlpack::dtype_code;
  const char* kind = "code" ;
  switch (static_cast<C>(d.code)) {
    case C::Int: kind = "int"; break;
    case C::UInt: kind = "uint"; break;
    case C::Float: kind = "float"; break;
    case C::Bfloat: kind = "bfloat"; break;
    case C::Bool: kind = "bool"; break;
    default: break;
  }
  return std::string(kind) + std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

std::string shape_of(const Input& a) {
  std::string s = "[";
  for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + "]";
}

template <class F>
nb::object wrap(void* data, const std::vector<size_t>& shape, nb::handle owner, nb::dlpack::dtype dt) {
  return nb::ndarray<F>(data, shape.size(), shape.data(), owner, nullptr, dt, nb::device::cpu::value).cast();
}

}  // namespace

Framework framework_from(const std::string& name) {
  if (name == "torch") return Framework::Torch;
  if (name == "numpy") return Framework::NumPy;
  if (name == "dlpack") return Framework::DLPack;
  throw BadInput("output: expected 'torch', 'numpy' or 'dlpack', got '" + name + "'");
}

nb::object to_python(const tf::Tensor& t, Framework f) {
  if (t.device != tf::Device::CPU) throw tf::Error("to_python: " + t.describe() + " is not on the CPU");
  tf::Tensor owned = t;
  if (!owned.storage) {
    owned = tf::empty(t.dtype, t.shape);
    std::memcpy(owned.data, t.data, t.nbytes());
  }
  // the capsule holds a reference to the storage: the array owns the bytes it shows
  auto* keep = new std::shared_ptr<void>(owned.storage);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<void>*>(p); });
  std::vector<size_t> shape(owned.shape.begin(), owned.shape.end());
  nb::dlpack::dtype dt = dlpack_dtype(owned.dtype);
  switch (f) {
    case Framework::Torch: return wrap<nb::pytorch>(owned.data, shape, owner, dt);
    case Framework::NumPy:
      if (owned.dtype == tf::DType::BF16) dt = nb::dtype<uint16_t>();
      return wrap<nb::numpy>(owned.data, shape, owner, dt);
    case Framework::DLPack: return wrap<nb::array_api>(owned.data, shape, owner, dt);
  }
  throw tf::Error("to_python: unknown framework");
}

tf::Tensor borrow(const Input& a, const std::string& name, tf::DType dtype, int rank) {
  const nb::dlpack::dtype want = dlpack_dtype(dtype);
  if (a.dtype() != want)
    throw BadInput(name + ": dtype " + dtype_str(a.dtype()) + ", expected " + dtype_str(want) +
                   " (no conversion is made; convert it first)");
  if (static_cast<int>(a.ndim()) != rank)
    throw BadInput(name + ": shape " + shape_of(a) + " has " + std::to_string(a.ndim()) + " dimensions, expected " +
                   std::to_string(rank));
  if (a.device_type() != nb::device::cpu::value)
    throw BadInput(name + ": not in CPU memory (DLPack device type " + std::to_string(a.device_type()) +
                   "); the engine takes host tensors and returns host tensors, device= chooses where it computes");
  // C-contiguous: each stride the product of the sizes after it (a size-1 axis, or an empty array,
  // may have any strides)
  int64_t expect = 1;
  for (int i = rank - 1; i >= 0 && a.size() > 0; --i) {
    if (a.shape(i) != 1 && a.stride(i) != expect)
      throw BadInput(name + ": shape " + shape_of(a) + " is not C-contiguous (call .contiguous() first)");
    expect *= static_cast<int64_t>(a.shape(i));
  }
  tf::Tensor t;
  t.data = static_cast<char*>(a.data_handle()) + a.byte_offset();  // never written through
  t.dtype = dtype;
  t.shape.assign(a.shape_ptr(), a.shape_ptr() + rank);
  t.device = tf::Device::CPU;
  return t;
}

tf::Tensor item(const tf::Tensor& batch, int64_t b) {
  tf::Tensor t;
  t.shape.assign(batch.shape.begin() + 1, batch.shape.end());
  t.dtype = batch.dtype;
  t.device = batch.device;
  t.storage = batch.storage;
  t.data = static_cast<char*>(batch.data) + static_cast<size_t>(b) * tf::shape_numel(t.shape) * tf::dtype_size(t.dtype);
  return t;
}

}  // namespace tfpy
