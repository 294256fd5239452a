#include "backend/cuda/runtime/pinned_host.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>

namespace tf::cuda {

namespace {

constexpr size_t kGranule = size_t(1) << 16;    // sizes rounded up, so near shapes share buffers
constexpr size_t kMostCached = size_t(256) << 20;  // unused bytes kept; more go back to the driver
constexpr size_t kLargest = size_t(1) << 30;     // larger tensors stay pageable: pinning is the host's scarce memory

struct Pool {
  std::mutex mu;
  std::map<const char*, size_t> live;  // every buffer of the pool, in use or cached: start -> size
  std::multimap<size_t, void*> cached;
  size_t cached_bytes = 0;
};

// Lives for the whole process: tensors freed during static destruction still find it.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

}  // namespace

void* pinned_host_alloc(size_t bytes) {
  if (bytes > kLargest) return nullptr;
  const size_t size = (bytes + kGranule - 1) / kGranule * kGranule;
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> l(p.mu);
    auto it = p.cached.find(size);
    if (it != p.cached.end()) {
      void* q = it->second;
      p.cached.erase(it);
      p.cached_bytes -= size;
      return q;
    }
  }
  void* q = nullptr;
  if (cudaMallocHost(&q, size) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> l(p.mu);
  p.live.emplace(static_cast<const char*>(q), size);
  return q;
}

void pinned_host_free(void* q) {
  if (!q) return;
  Pool& p = pool();
  std::unique_lock<std::mutex> l(p.mu);
  auto it = p.live.find(static_cast<const char*>(q));
  if (it == p.live.end()) return;  // not ours
  const size_t size = it->second;
  if (p.cached_bytes + size <= kMostCached) {
    p.cached.emplace(size, q);
    p.cached_bytes += size;
    return;
  }
  p.live.erase(it);
  l.unlock();
  cudaFreeHost(q);
}

void pinned_host_release_cached() {
  Pool& p = pool();
  std::multimap<size_t, void*> spare;
  {
    std::lock_guard<std::mutex> l(p.mu);
    spare.swap(p.cached);
    p.cached_bytes = 0;
    for (auto& [size, q] : spare) p.live.erase(static_cast<const char*>(q));
  }
  for (auto& [size, q] : spare) cudaFreeHost(q);
}

}  // namespace tf::cuda
