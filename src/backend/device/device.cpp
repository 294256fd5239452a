#include "backend/device/device.h"

#include <unistd.h>

#include "core/error.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/runtime.h"
#endif

namespace tf {

Device select_device(const std::string& flag) {
  if (flag == "cpu") return Device::CPU;
  if (flag == "cuda") {
#ifdef TF_HAVE_CUDA
    cuda::init_runtime();  // refuses, by name, a GPU the kernels were not built for
    return Device::CUDA;
#else
    fail("--device cuda: this build has no CUDA backend (built without nvcc); use --device cpu");
#endif
  }
  fail("--device " + flag + ": expected cpu or cuda");
}

std::string peak_memory_line(Device d) {
#ifdef TF_HAVE_CUDA
  if (d == Device::CUDA) return cuda::peak_memory_line();
#endif
  (void)d;
  return "";
}

void release_cached_memory(Device d) {
#ifdef TF_HAVE_CUDA
  if (d == Device::CUDA && cuda::runtime_started()) cuda::release_cached_memory();
#endif
  (void)d;
}

AvailableMemory available_memory(Device d) {
#ifdef TF_HAVE_CUDA
  if (d == Device::CUDA) {
    // the pool's cached blocks count as free without being trimmed: a trim would make the next run
    // map its memory afresh (device_alloc trims and retries where cached sizes do not fit)
    const cuda::MemoryStats m = cuda::memory_stats();
    return {m.device_free + m.pool_cached, "free GPU memory"};
  }
#endif
  (void)d;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) fail("cannot read this machine's physical memory size (sysconf)");
  return {static_cast<uint64_t>(pages) * static_cast<uint64_t>(page), "physical memory"};
}

}  // namespace tf
