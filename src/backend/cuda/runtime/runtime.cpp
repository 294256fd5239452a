#include "backend/cuda/runtime/runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/cuda/runtime/capture_arena.h"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/runtime/pinned_host.h"
#include "backend/variants.h"
#include "core/error.h"
#include "core/tensor.h"

namespace tf::cuda {

namespace {

constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

std::string gib(size_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", double(b) / double(size_t(1) << 30));
  return s;
}

std::string mib(size_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MiB", double(b) / double(size_t(1) << 20));
  return s;
}

// Lives for the whole process: tensors freed during static destruction still find it.
struct Runtime {
  int device = 0;
  cudaDeviceProp props{};
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* lt_workspace = nullptr;
  std::mutex mu;
  std::unordered_map<void*, size_t> sizes;
  size_t in_use = 0, peak = 0;
};

Runtime* g_rt = nullptr;
std::once_flag g_once;

Runtime& rt() {
  if (!g_rt) fail("CUDA runtime used before --device cuda selected it (tf::cuda::init_runtime)");
  return *g_rt;
}

void refuse_unsupported(const cudaDeviceProp& p) {
  std::string why = unsupported_gpu_reason(p.name, p.major, p.minor);
  if (!why.empty()) fail(why);
}

// Pageable host memory this large goes through a pinned buffer of ours: the host copy plus the
// copy engine's full speed beats the driver's own bounce copies.
constexpr size_t kStagedCopyFrom = size_t(64) << 10;

bool is_pinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// In pieces of at most kStagePiece through one pooled pinned buffer, so a huge copy pins little.
constexpr size_t kStagePiece = size_t(16) << 20;

void copy_through_pinned(void* dst, const void* src, size_t n, bool to_host) {
  const size_t piece = n < kStagePiece ? n : kStagePiece;
  size_t stage_bytes = size_t(64) << 10;  // a power of two, so copies of near sizes share one buffer
  while (stage_bytes < piece) stage_bytes *= 2;
  void* stage = pinned_host_alloc(stage_bytes);
  cudaStream_t s = g_rt->stream;
  if (!stage) {  // no pinned memory to spare: the driver's path
    TF_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    TF_CUDA(cudaStreamSynchronize(s));
    return;
  }
  cudaError_t e = cudaSuccess;
  for (size_t off = 0; off < n && e == cudaSuccess; off += piece) {
    const size_t len = n - off < piece ? n - off : piece;
    char* d = static_cast<char*>(dst) + off;
    const char* from = static_cast<const char*>(src) + off;
    if (!to_host) std::memcpy(stage, from, len);
    e = cudaMemcpyAsync(to_host ? stage : d, to_host ? from : stage, len, cudaMemcpyDefault, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e == cudaSuccess && to_host) std::memcpy(d, stage, len);
  }
  pinned_host_free(stage);
  if (e != cudaSuccess) fail_cuda(e, "a copy through pinned memory", __FILE__, __LINE__);
}

void start() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    fail(std::string("--device cuda: no usable CUDA GPU (cudaGetDeviceCount: ") +
         (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + "); use --device cpu");
  auto* r = new Runtime();
  TF_CUDA(cudaGetDeviceProperties(&r->props, 0));
  refuse_unsupported(r->props);
  TF_CUDA(cudaSetDevice(0));
  TF_CUDA(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
  TF_CUDA(cudaDeviceGetDefaultMemPool(&r->pool, 0));
  uint64_t keep = UINT64_MAX;  // freed blocks stay cached in the pool for the next forward
  TF_CUDA(cudaMemPoolSetAttribute(r->pool, cudaMemPoolAttrReleaseThreshold, &keep));
  TF_CUBLAS(cublasLtCreate(&r->lt));
  g_rt = r;
  r->lt_workspace = device_alloc(kLtWorkspaceBytes, "cuBLASLt workspace");

  DeviceMemoryHooks h;
  h.alloc = [](size_t n) { return device_alloc(n); };
  h.free = [](void* p) { device_free(p); };
  h.copy = [](void* dst, const void* src, size_t n, Device dst_dev, Device src_dev) {
    cudaStream_t s = stream();
    const void* host = dst_dev == Device::CPU ? dst : src_dev == Device::CPU ? src : nullptr;
    if (host && n >= kStagedCopyFrom && !is_pinned(host)) {
      copy_through_pinned(dst, src, n, dst_dev == Device::CPU);
      return;
    }
    TF_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    // a host side may be reused or freed as soon as we return
    if (host) TF_CUDA(cudaStreamSynchronize(s));
  };
  h.zero = [](void* dst, size_t n) { TF_CUDA(cudaMemsetAsync(dst, 0, n, stream())); };
  h.alloc_host = [](size_t n) { return pinned_host_alloc(n); };
  h.free_host = [](void* p) { pinned_host_free(p); };
  register_device_memory(Device::CUDA, std::move(h));
}

}  // namespace

[[noreturn]] void fail_cuda(cudaError_t e, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear a non-sticky error so later calls report their own
  fail(std::string("CUDA error in ") + call + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " +
       file + ":" + std::to_string(line));
}

[[noreturn]] void fail_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  fail(std::string("cuBLASLt error in ") + call + ": status " + std::to_string(int(s)) + " at " + file + ":" +
       std::to_string(line));
}

std::string unsupported_gpu_reason(const std::string& name, int major, int minor) {
  if (major == 9) return "";
  return "--device cuda: GPU 0 is " + name + " (sm_" + std::to_string(major) + std::to_string(minor) +
         "); this build's kernels are for sm_90a (Hopper: H100, H200) only; use --device cpu";
}

void init_runtime() { std::call_once(g_once, start); }
bool runtime_started() { return g_rt != nullptr; }

cudaStream_t stream() { return rt().stream; }
cublasLtHandle_t lt_handle() { return rt().lt; }
void* lt_workspace() { return rt().lt_workspace; }
size_t lt_workspace_bytes() { return kLtWorkspaceBytes; }
bool dependent_launches() { return variant_is<Variant::cuda_pdl>("on"); }

cudaLaunchAttribute programmatic_dependence() {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  return a;
}

namespace {
thread_local bool g_last_launch_streaming = false;
}

void mark_streaming_launch(bool streaming) { g_last_launch_streaming = streaming; }

bool launch_prep_as_dependent() {
  const bool on = dependent_launches() && variant_is<Variant::cuda_pdl_prep>("on");
  const bool after = g_last_launch_streaming;
  g_last_launch_streaming = false;
  return on && after;
}

int sm_count() { return rt().props.multiProcessorCount; }
size_t max_shared_per_block_optin() { return rt().props.sharedMemPerBlockOptin; }

std::string device_description() {
  const cudaDeviceProp& p = rt().props;
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " + gib(p.totalGlobalMem) + ")";
}

void* device_alloc(size_t bytes, const char* what) {
  Runtime& r = rt();
  void* p = nullptr;
  if (bytes == 0) return nullptr;
  CaptureArena* arena = current_capture_arena();
  if (arena && arena->base()) {
    const size_t off = arena->take(bytes);
    if (off != SIZE_MAX) return arena->base() + off;  // else the pool's (an allocation node in the graph)
  }
  cudaError_t e = cudaMallocAsync(&p, bytes, r.stream);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    // cached blocks may be the wrong sizes: give them back and try once more
    TF_CUDA(cudaStreamSynchronize(r.stream));
    TF_CUDA(cudaMemPoolTrimTo(r.pool, 0));
    e = cudaMallocAsync(&p, bytes, r.stream);
  }
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    size_t used;
    {
      std::lock_guard<std::mutex> l(r.mu);
      used = r.in_use;
    }
    throw OutOfMemory("out of GPU memory allocating " + std::string(what) + ": asked for " + mib(bytes) + ", " +
                      mib(free_b) + " free of " + gib(total_b) + " (" + gib(used) + " held by TensorFold)");
  }
  if (e != cudaSuccess) fail_cuda(e, "cudaMallocAsync", __FILE__, __LINE__);
  if (arena && !arena->base()) arena->plan(p, bytes);
  std::lock_guard<std::mutex> l(r.mu);
  r.sizes[p] = bytes;
  r.in_use += bytes;
  if (r.in_use > r.peak) r.peak = r.in_use;
  return p;
}

void device_free(void* p) {
  if (!p || !g_rt) return;
  if (CaptureArena* arena = current_capture_arena()) {
    if (arena->holds(p)) {
      arena->give_back(static_cast<size_t>(static_cast<char*>(p) - arena->base()));
      return;
    }
    if (!arena->base()) arena->unplan(p);
  }
  Runtime& r = *g_rt;
  {
    std::lock_guard<std::mutex> l(r.mu);
    auto it = r.sizes.find(p);
    if (it == r.sizes.end()) return;  // not ours
    r.in_use -= it->second;
    r.sizes.erase(it);
  }
  // stream-ordered: work already queued that reads p finishes before the block is reused
  cudaFreeAsync(p, r.stream);
}

MemoryStats memory_stats() {
  Runtime& r = rt();
  MemoryStats s;
  {
    std::lock_guard<std::mutex> l(r.mu);
    s.in_use = r.in_use;
    s.peak_in_use = r.peak;
  }
  cudaMemGetInfo(&s.device_free, &s.device_total);
  uint64_t reserved = 0, used = 0;
  if (cudaMemPoolGetAttribute(r.pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
      cudaMemPoolGetAttribute(r.pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess && reserved > used)
    s.pool_cached = static_cast<size_t>(reserved - used);
  return s;
}

void reset_peak_memory() {
  Runtime& r = rt();
  std::lock_guard<std::mutex> l(r.mu);
  r.peak = r.in_use;
}

std::string peak_memory_line() {
  MemoryStats s = memory_stats();
  return "peak GPU memory: " + gib(s.peak_in_use) + " (in use now " + gib(s.in_use) + ")";
}

void synchronize(const char* after) {
  cudaError_t e = cudaStreamSynchronize(rt().stream);
  if (e != cudaSuccess) fail_cuda(e, after, __FILE__, __LINE__);
}

void release_cached_memory() {
  Runtime& r = rt();
  TF_CUDA(cudaStreamSynchronize(r.stream));
  TF_CUDA(cudaMemPoolTrimTo(r.pool, 0));
  pinned_host_release_cached();
}

namespace {

// One event a direction, recorded then waited on at once (the wait takes the recording's work).
void order(cudaStream_t first, cudaStream_t then) {
  cudaEvent_t e = nullptr;
  TF_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  TF_CUDA(cudaEventRecord(e, first));
  TF_CUDA(cudaStreamWaitEvent(then, e, 0));
  TF_CUDA(cudaEventDestroy(e));  // released once the wait has passed
}

}  // namespace

void engine_waits_for(void* s) { order(static_cast<cudaStream_t>(s), rt().stream); }
void s_waits_for_engine(void* s) { order(rt().stream, static_cast<cudaStream_t>(s)); }

}  // namespace tf::cuda
