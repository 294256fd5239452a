#include "backend/cuda/runtime/upload.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "backend/cuda/runtime/check.h"
#include "core/error.h"

namespace tf::cuda {

namespace {

constexpr size_t kChunkBytes = size_t(16) << 20;

struct Chunk {
  void* dst;
  const char* src;
  size_t bytes;
};

std::vector<Chunk> split(const std::vector<HostToDeviceJob>& jobs) {
  std::vector<Chunk> out;
  for (const HostToDeviceJob& j : jobs)
    for (size_t off = 0; off < j.bytes; off += kChunkBytes)
      out.push_back({static_cast<char*>(j.dst) + off, static_cast<const char*>(j.src) + off,
                     std::min(kChunkBytes, j.bytes - off)});
  return out;
}

// Buffer b serves chunks b, b + B, b + 2B, ...; `filled` and `issued` hold the last chunk index
// that reached each stage, so readers and the issuing thread wait on plain counters.
struct Staging {
  std::vector<void*> pinned;
  std::vector<cudaEvent_t> drained;
  std::vector<long> filled, issued;
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  bool stop = false;

  explicit Staging(size_t n) : pinned(n, nullptr), drained(n, nullptr), filled(n, -1), issued(n, -1) {}
  // In a catch block: keeps the first failure for the caller to rethrow and stops every thread.
  void stop_with_current_exception() {
    std::lock_guard<std::mutex> l(mu);
    if (!error) error = std::current_exception();
    stop = true;
  }
  ~Staging() {
    for (cudaEvent_t e : drained)
      if (e) cudaEventDestroy(e);
    for (void* p : pinned)
      if (p) cudaFreeHost(p);
  }
};

}  // namespace

void copy_host_to_device(const std::vector<HostToDeviceJob>& jobs,
                         const std::function<void(size_t, size_t)>& progress) {
  std::vector<Chunk> chunks = split(jobs);
  if (chunks.empty()) return;
  size_t total = 0;
  for (const Chunk& c : chunks) total += c.bytes;

  unsigned hw = std::max(2u, std::thread::hardware_concurrency());
  int readers = static_cast<int>(std::min<size_t>({8, hw - 1, chunks.size()}));
  readers = std::max(readers, 1);
  const size_t nbuf = std::min<size_t>(2 * readers + 2, chunks.size());
  Staging st(nbuf);
  for (size_t b = 0; b < nbuf; ++b) {
    TF_CUDA(cudaHostAlloc(&st.pinned[b], kChunkBytes, cudaHostAllocDefault));
    TF_CUDA(cudaEventCreateWithFlags(&st.drained[b], cudaEventDisableTiming));
  }
  cudaStream_t s = stream();
  std::atomic<long> next{0};
  const long n = static_cast<long>(chunks.size());
  const long B = static_cast<long>(nbuf);

  auto reader = [&] {
    try {
      for (long i = next++; i < n; i = next++) {
        size_t b = static_cast<size_t>(i % B);
        {
          std::unique_lock<std::mutex> l(st.mu);
          st.cv.wait(l, [&] { return st.stop || i < B || st.issued[b] == i - B; });
          if (st.stop) return;
        }
        if (i >= B) TF_CUDA(cudaEventSynchronize(st.drained[b]));  // previous copy out of b done
        std::memcpy(st.pinned[b], chunks[i].src, chunks[i].bytes);
        {
          std::lock_guard<std::mutex> l(st.mu);
          st.filled[b] = i;
        }
        st.cv.notify_all();
      }
    } catch (...) {
      st.stop_with_current_exception();
      st.cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (int r = 0; r < readers; ++r) pool.emplace_back(reader);

  size_t done = 0;
  try {
    for (long i = 0; i < n; ++i) {
      size_t b = static_cast<size_t>(i % B);
      {
        std::unique_lock<std::mutex> l(st.mu);
        st.cv.wait(l, [&] { return st.stop || st.filled[b] == i; });
        if (st.stop) break;
      }
      TF_CUDA(cudaMemcpyAsync(chunks[i].dst, st.pinned[b], chunks[i].bytes, cudaMemcpyHostToDevice, s));
      TF_CUDA(cudaEventRecord(st.drained[b], s));
      {
        std::lock_guard<std::mutex> l(st.mu);
        st.issued[b] = i;
      }
      st.cv.notify_all();
      done += chunks[i].bytes;
      if (progress) progress(done, total);
    }
  } catch (...) {
    st.stop_with_current_exception();
  }
  st.cv.notify_all();
  for (std::thread& t : pool) t.join();
  cudaError_t e = cudaStreamSynchronize(s);  // pinned buffers are freed next
  if (st.error) std::rethrow_exception(st.error);
  if (e != cudaSuccess) fail_cuda(e, "cudaStreamSynchronize after the weight upload", __FILE__, __LINE__);
}

}  // namespace tf::cuda
