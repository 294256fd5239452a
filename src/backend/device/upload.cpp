#include "backend/device/upload.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "core/error.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/upload.h"
#endif

namespace tf {

UploadReport upload_tensors(const std::vector<Tensor*>& tensors, Device d, const std::string& what) {
  std::vector<std::vector<Tensor*>> groups;
  for (Tensor* t : tensors) groups.push_back({t});
  return upload_tensors(groups, d, what);
}

UploadReport upload_tensors(const std::vector<std::vector<Tensor*>>& groups, Device d, const std::string& what) {
  UploadReport rep;
  if (d == Device::CPU) return rep;
#ifdef TF_HAVE_CUDA
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Tensor*> tensors;
  std::vector<Tensor> out;
  std::vector<cuda::HostToDeviceJob> jobs;
  constexpr size_t kAlign = 256;
  auto padded = [](const Tensor* t) { return (t->nbytes() + kAlign - 1) / kAlign * kAlign; };
  for (const std::vector<Tensor*>& group : groups)
    for (Tensor* t : group) {
      require(t->device == Device::CPU, "upload_tensors: " + what + " holds " + t->describe() + ", expected host tensors");
      tensors.push_back(t);
    }
  out.reserve(tensors.size());
  for (const std::vector<Tensor*>& group : groups) {
    size_t total = 0;
    for (const Tensor* t : group) total += padded(t);
    Tensor block = empty(DType::U8, {static_cast<int64_t>(total)}, d);
    size_t offset = 0;
    for (Tensor* t : group) {
      Tensor v;
      v.storage = block.storage;
      v.data = static_cast<char*>(block.data) + offset;
      v.dtype = t->dtype;
      v.shape = t->shape;
      v.device = d;
      offset += padded(t);
      out.push_back(std::move(v));
      jobs.push_back({out.back().data, t->data, t->nbytes()});
      rep.bytes += t->nbytes();
    }
  }
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  int last_pct = -1;
  cuda::copy_host_to_device(jobs, [&](size_t done, size_t total) {
    int pct = static_cast<int>(100.0 * double(done) / double(total));
    if (!tty || pct == last_pct) return;
    last_pct = pct;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\r%s to %s: %3d%% %.2f / %.2f GB (%.2f GB/s)", what.c_str(), device_name(d), pct,
                 double(done) / 1e9, double(total) / 1e9, s > 0 ? double(done) / 1e9 / s : 0.0);
  });
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < tensors.size(); ++i) *tensors[i] = std::move(out[i]);
  std::fprintf(stderr, "%s%s to %s: %.2f GB in %.2f s (%.2f GB/s)\n", tty ? "\r" : "", what.c_str(),
               device_name(d), double(rep.bytes) / 1e9, rep.seconds,
               rep.seconds > 0 ? double(rep.bytes) / 1e9 / rep.seconds : 0.0);
  return rep;
#else
  (void)groups;
  fail("upload_tensors: " + what + ": this build has no CUDA backend (use --device cpu)");
#endif
}

}  // namespace tf
