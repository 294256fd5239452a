// The CUDA runtime's ceilings on this GPU: device copy bandwidth, cuBLASLt bf16 products at the
// encoder's shapes (time, weight-streaming GB/s, TFLOP/s), and the weight upload from a mapped file
// against `cat` reading the same file. Usage: bench_cuda_runtime [file-for-upload-test]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef TF_HAVE_CUDA
#include <algorithm>
#include <chrono>
#include <random>

#include "backend/cuda/runtime/check.h"
#include "backend/cuda/kernels/linear/gemm.h"
#include "backend/cuda/runtime/runtime.h"
#include "backend/device/upload.h"
#include "core/bf16.h"
#include "core/mapped_file.h"
#include "core/tensor.h"

namespace {

using namespace tf;

template <class F>
double median_us(F&& f, int reps = 30) {
  cudaStream_t s = cuda::stream();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a, s);
    f();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000.0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Tensor random_device_bf16(Shape s, uint32_t seed) {
  Tensor h = empty(DType::BF16, std::move(s));
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < h.numel(); ++i) h.ptr<bf16>()[i] = to_bf16(u(g));
  return to_device(h, Device::CUDA);
}

void copy_bandwidth() {
  size_t n = size_t(2) << 30;
  void *a = cuda::device_alloc(n), *b = cuda::device_alloc(n);
  TF_CUDA(cudaMemsetAsync(a, 1, n, cuda::stream()));
  double us = median_us([&] { TF_CUDA(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, cuda::stream())); }, 10);
  std::printf("device copy: %.0f GB in %.0f us = %.0f GB/s (read + write)\n", 2.0 * n / 1e9, us, 2.0 * n / us / 1e3);
  cuda::device_free(a);
  cuda::device_free(b);
}

// The encoder's projections as the forward calls them (groups that read the same x in one call),
// each timed on enough weight copies that no repeat finds its weights in L2.
void gemms() {
  struct G {
    const char* name;
    int64_t k;
    std::vector<int64_t> ns;
  };
  const std::vector<G> groups = {{"delta in: qkv+z+b+a", 4096, {8192, 4096, 32, 32}},
                                 {"attn in: q+k+v", 4096, {8192, 1024, 1024}},
                                 {"mlp in: gate+up", 4096, {12288, 12288}},
                                 {"mlp down", 12288, {4096}},
                                 {"out / o", 4096, {4096}}};
  std::printf("%-22s %6s %10s %9s %9s\n", "projection", "m", "us", "GB/s(w)", "TFLOP/s");
  for (const G& g : groups) {
    int64_t bytes = 0;
    std::vector<cuda::StreamingWeight> shapes;
    for (int64_t n : g.ns) bytes += 2 * n * g.k, shapes.push_back({nullptr, nullptr, n});
    const int rows = cuda::streaming_tile_rows(g.k, shapes);
    int tiles = 0;
    for (int64_t n : g.ns) tiles += static_cast<int>((n + rows - 1) / rows);
    std::printf("%s: %d weight tiles of %d rows, %d k shares a tile on the streaming kernel\n", g.name, tiles, rows,
                cuda::streaming_splits(g.k, tiles));
    const int copies = static_cast<int>(std::max<int64_t>(1, (int64_t(256) << 20) / bytes + 1));
    std::vector<std::vector<Tensor>> w(copies);
    for (int c = 0; c < copies; ++c)
      for (int64_t n : g.ns) w[c].push_back(random_device_bf16({n, g.k}, 1 + c));
    for (int64_t m : {10, 34, 75, 128, 1024, 4096}) {
      Tensor x = random_device_bf16({m, g.k}, 2);
      std::vector<Tensor> y;
      for (int64_t n : g.ns) y.push_back(empty(DType::BF16, {m, n}, Device::CUDA));
      int c = 0;
      double us = median_us([&] {
        std::vector<cuda::StreamingWeight> ws;
        for (size_t i = 0; i < g.ns.size(); ++i) ws.push_back({w[c][i].data, y[i].data, g.ns[i]});
        cuda::gemm_bf16_xwt_group(x.data, m, g.k, ws);
        c = (c + 1) % copies;
      });
      std::printf("%-22s %6ld %10.1f %9.0f %9.1f\n", g.name, long(m), us, double(bytes) / us / 1e3,
                  double(m) * double(bytes) / us / 1e6);
    }
  }
}

void upload_vs_cat(const std::string& path) {
  auto t0 = std::chrono::steady_clock::now();
  std::string cmd = "cat '" + path + "' > /dev/null";
  if (std::system(cmd.c_str()) != 0) std::printf("cat failed\n");
  double cat_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto f = MappedFile::open(path);
  size_t n = f->size() / 2 * 2;
  Tensor h;
  h.data = const_cast<uint8_t*>(f->data());
  h.dtype = DType::BF16;
  h.shape = {int64_t(n / 2)};
  std::vector<Tensor*> ptrs{&h};
  UploadReport r = upload_tensors(ptrs, Device::CUDA, "upload test");
  std::printf("cat: %.2f GB in %.2f s = %.2f GB/s; upload: %.2f GB/s = %.0f%% of cat\n", f->size() / 1e9, cat_s,
              f->size() / 1e9 / cat_s, r.bytes / 1e9 / r.seconds, 100.0 * (r.bytes / r.seconds) / (f->size() / cat_s));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    cuda::init_runtime();
    std::printf("%s\n", cuda::device_description().c_str());
    copy_bandwidth();
    gemms();
    if (argc > 1) upload_vs_cat(argv[1]);
    std::printf("%s\n", cuda::peak_memory_line().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_runtime: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
#else
int main() {
  std::printf("bench_cuda_runtime: built without CUDA\n");
  return 0;
}
#endif
