// Every kernel's start and end on the GPU, for any CUDA program, graph-launched kernels included:
// a CUPTI injection library. Built only where the toolkit has CUPTI; run on the GPU machine as
//   CUDA_INJECTION64_PATH=libtf_kernel_timeline.so TF_TIMELINE_OUT=kernels.csv <program> ...
// and read the CSV (start_ns,end_ns,graph_id,name; demangled) with bench/cuda/kernel_gaps.py.
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

FILE* g_out = nullptr;
std::mutex g_mu;

std::string demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : name;
  std::free(d);
  for (char& c : s)
    if (c == ',') c = ';';  // one CSV column
  return s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = size_t(8) << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      std::fprintf(g_out, "%llu,%llu,%u,%s\n", static_cast<unsigned long long>(k->start),
                   static_cast<unsigned long long>(k->end), k->graphId, demangled(k->name).c_str());
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      std::fprintf(g_out, "%llu,%llu,%u,[memcpy kind %d %llu bytes]\n", static_cast<unsigned long long>(m->start),
                   static_cast<unsigned long long>(m->end), m->graphId, int(m->copyKind),
                   static_cast<unsigned long long>(m->bytes));
    }
  }
  std::free(buffer);
}

void flush() {
  cuptiActivityFlushAll(1);
  if (g_out) std::fclose(g_out);
}

}  // namespace

extern "C" int InitializeInjection(void) {
  const char* env = std::getenv("TF_TIMELINE_OUT");
  const char* path = env ? env : "kernels.csv";
  g_out = std::fopen(path, "w");
  if (!g_out) {
    std::fprintf(stderr, "tf_kernel_timeline: cannot write %s (TF_TIMELINE_OUT); no timeline recorded\n", path);
    return 0;
  }
  std::fprintf(g_out, "start_ns,end_ns,graph_id,name\n");
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "tf_kernel_timeline: CUPTI refused activity tracing; %s stays empty\n", path);
    return 0;
  }
  std::atexit(flush);
  return 1;
}
