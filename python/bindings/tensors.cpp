#include "tensors.h"

#include <cstring>
#include <memory>

#include "core/dtype.h"
#include "errors.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/runtime.h"
#endif

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
nb::object wrap(void* data, const std::vector<size_t>& shape, nb::handle owner, nb::dlpack::dtype dt, int32_t device) {
  return nb::ndarray<F>(data, shape.size(), shape.data(), owner, nullptr, dt, device, 0).cast();
}

// What a Python array's capsule keeps: the storage, and for GPU memory the caller's stream, which
// the engine's waits on before the memory goes back to its pool.
struct Kept {
  std::shared_ptr<void> storage;
  bool gpu = false;
  uintptr_t stream = 0;
  ~Kept() {
#ifdef TF_HAVE_CUDA
    if (gpu) {
      try {
        tf::cuda::engine_waits_for(reinterpret_cast<void*>(stream));
      } catch (...) {  // a failing GPU at release: the memory goes back unordered rather than not at all
      }
    }
#endif
  }
};

}  // namespace

Framework framework_from(const std::string& name) {
  if (name == "torch") return Framework::Torch;
  if (name == "numpy") return Framework::NumPy;
  if (name == "dlpack") return Framework::DLPack;
  throw BadInput("output: expected 'torch', 'numpy' or 'dlpack', got '" + name + "'");
}

nb::object to_python(const tf::Tensor& t, Framework f, uintptr_t stream) {
  const bool gpu = t.device == tf::Device::CUDA;
  if (t.device != tf::Device::CPU && !gpu) throw tf::Error("to_python: " + t.describe() + " is on no device Python can hold");
  if (gpu && f == Framework::NumPy) throw BadInput("output='numpy': numpy cannot hold GPU memory (use 'torch' or 'dlpack')");
  tf::Tensor owned = t;
  if (!owned.storage) {
    owned = tf::empty(t.dtype, t.shape, t.device);
    tf::copy_into(owned, t);
  }
  // the capsule holds a reference to the storage: the array owns the bytes it shows
  auto* keep = new Kept{owned.storage, gpu, stream};
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Kept*>(p); });
  std::vector<size_t> shape(owned.shape.begin(), owned.shape.end());
  nb::dlpack::dtype dt = dlpack_dtype(owned.dtype);
  const int32_t device = gpu ? nb::device::cuda::value : nb::device::cpu::value;
  switch (f) {
    case Framework::Torch: return wrap<nb::pytorch>(owned.data, shape, owner, dt, device);
    case Framework::NumPy:
      if (owned.dtype == tf::DType::BF16) dt = nb::dtype<uint16_t>();
      return wrap<nb::numpy>(owned.data, shape, owner, dt, device);
    case Framework::DLPack: return wrap<nb::array_api>(owned.data, shape, owner, dt, device);
  }
  throw tf::Error("to_python: unknown framework");
}

void engine_waits_for_caller(uintptr_t stream) {
#ifdef TF_HAVE_CUDA
  tf::cuda::engine_waits_for(reinterpret_cast<void*>(stream));
#else
  (void)stream;
#endif
}

void caller_waits_for_engine(uintptr_t stream) {
#ifdef TF_HAVE_CUDA
  tf::cuda::s_waits_for_engine(reinterpret_cast<void*>(stream));
#else
  (void)stream;
#endif
}

tf::Tensor borrow(const Input& a, const std::string& name, tf::DType dtype, int rank, tf::Device engine) {
  const nb::dlpack::dtype want = dlpack_dtype(dtype);
  if (a.dtype() != want)
    throw BadInput(name + ": dtype " + dtype_str(a.dtype()) + ", expected " + dtype_str(want) +
                   " (no conversion is made; convert it first)");
  if (static_cast<int>(a.ndim()) != rank)
    throw BadInput(name + ": shape " + shape_of(a) + " has " + std::to_string(a.ndim()) + " dimensions, expected " +
                   std::to_string(rank));
  const bool gpu = a.device_type() == nb::device::cuda::value;
  if (gpu && engine != tf::Device::CUDA)
    throw BadInput(name + ": in GPU memory, but this object computes on the CPU (load it with device='cuda', or "
                   "pass a CPU tensor)");
  if (gpu && a.device_id() != 0)
    throw BadInput(name + ": on GPU " + std::to_string(a.device_id()) + "; the engine runs on GPU 0");
  if (!gpu && a.device_type() != nb::device::cpu::value)
    throw BadInput(name + ": in neither host nor CUDA memory (DLPack device type " + std::to_string(a.device_type()) +
                   ")");
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
  t.device = gpu ? tf::Device::CUDA : tf::Device::CPU;
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
