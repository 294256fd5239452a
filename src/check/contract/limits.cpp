#include "check/contract/limits.h"

#ifdef TF_HAVE_CUDA
#include <cuda_runtime.h>
#include <cxxabi.h>
#include <elf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#endif

namespace tf::contract {

#ifndef TF_HAVE_CUDA

bool cuda_device_present(std::string* why) {
  if (why) *why = "this build has no CUDA backend (built without nvcc)";
  return false;
}
StaticLimits check_static_limits() { return {}; }
std::string launch_error_after_run() { return {}; }

#else

namespace {

std::string demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : name;
}

// The program's own file, whole (the fatbins live in its .nv_fatbin section).
std::vector<char> read_self() {
  std::vector<char> bytes;
  FILE* f = std::fopen("/proc/self/exe", "rb");
  if (!f) return bytes;
  char buf[1 << 16];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  return bytes;
}

// The .nv_fatbin section's bytes (empty when absent).
std::pair<size_t, size_t> fatbin_section(const std::vector<char>& elf) {
  if (elf.size() < sizeof(Elf64_Ehdr) || std::memcmp(elf.data(), ELFMAG, SELFMAG) != 0) return {0, 0};
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  if (eh.e_shoff == 0 || eh.e_shoff + static_cast<size_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > elf.size()) return {0, 0};
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), elf.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  if (eh.e_shstrndx >= eh.e_shnum) return {0, 0};
  const Elf64_Shdr& names = sh[eh.e_shstrndx];
  for (const Elf64_Shdr& h : sh) {
    if (names.sh_offset + h.sh_name >= elf.size()) continue;
    if (std::strcmp(elf.data() + names.sh_offset + h.sh_name, ".nv_fatbin") == 0 && h.sh_offset + h.sh_size <= elf.size())
      return {h.sh_offset, h.sh_size};
  }
  return {0, 0};
}

}  // namespace

bool cuda_device_present(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why)
      *why = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                              : std::string("no CUDA device on this machine");
    cudaGetLastError();
    return false;
  }
  return true;
}

std::string launch_error_after_run() {
  cudaError_t sync = cudaDeviceSynchronize();
  cudaError_t last = cudaGetLastError();
  cudaError_t e = last != cudaSuccess ? last : sync;
  if (e == cudaSuccess) return {};
  return std::string("CUDA reports ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

StaticLimits check_static_limits() {
  StaticLimits r;
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    r.problems.push_back("the device's limits could not be read");
    return r;
  }
  r.notes.push_back(std::string(p.name) + ": sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
                    std::to_string(p.regsPerBlock) + " registers per block, static shared " +
                    std::to_string(p.sharedMemPerBlock) + " B per block (opt-in " + std::to_string(p.sharedMemPerBlockOptin) +
                    " B), " + std::to_string(p.maxThreadsPerBlock) + " threads per block");
  // Every fatbin in this program is loaded as a library and each kernel's attributes read back:
  // the same numbers cudaFuncGetAttributes gives for the launched kernels.
  std::vector<char> self = read_self();
  auto [offset, size] = fatbin_section(self);
  if (size == 0) {
    r.problems.push_back("no .nv_fatbin section found in /proc/self/exe: the kernels' resources were not checked");
    return r;
  }
  constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
  size_t pos = offset, end = offset + size;
  int fatbins = 0;
  while (pos + 16 <= end) {
    uint32_t magic;
    std::memcpy(&magic, self.data() + pos, 4);
    if (magic != kFatbinMagic) {
      pos += 8;
      continue;
    }
    uint16_t header_size;
    uint64_t fat_size;
    std::memcpy(&header_size, self.data() + pos + 6, 2);
    std::memcpy(&fat_size, self.data() + pos + 8, 8);
    size_t blob = header_size + fat_size;
    if (pos + blob > end || blob < 16) break;
    std::unique_ptr<char, void (*)(void*)> copy(static_cast<char*>(std::aligned_alloc(4096, (blob + 4095) / 4096 * 4096)), std::free);
    std::memcpy(copy.get(), self.data() + pos, blob);
    pos += blob;
    ++fatbins;
    cudaLibrary_t lib;
    if (cudaLibraryLoadData(&lib, copy.get(), nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess) {
      r.problems.push_back("fatbin " + std::to_string(fatbins) + " of this program could not be loaded: " +
                           cudaGetErrorString(cudaGetLastError()));
      continue;
    }
    unsigned count = 0;
    cudaLibraryGetKernelCount(&count, lib);
    std::vector<cudaKernel_t> kernels(count);
    if (count) cudaLibraryEnumerateKernels(kernels.data(), count, lib);
    for (cudaKernel_t k : kernels) {
      cudaFuncAttributes a{};
      const char* name = nullptr;
      if (cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k)) != cudaSuccess) {
        r.problems.push_back("a kernel's attributes could not be read: " + std::string(cudaGetErrorString(cudaGetLastError())));
        continue;
      }
      std::string who = cudaFuncGetName(&name, reinterpret_cast<const void*>(k)) == cudaSuccess && name ? demangle(name) : "?";
      ++r.kernels_seen;
      if (a.numRegs > 255) r.problems.push_back(who + ": " + std::to_string(a.numRegs) + " registers per thread (limit 255)");
      if (a.sharedSizeBytes > p.sharedMemPerBlock)
        r.problems.push_back(who + ": " + std::to_string(a.sharedSizeBytes) + " B static shared memory (limit " +
                             std::to_string(p.sharedMemPerBlock) + ")");
      if (a.localSizeBytes > 0)
        r.problems.push_back(who + ": " + std::to_string(a.localSizeBytes) +
                             " B of local memory per thread (register spills or a stack frame)");
    }
    cudaLibraryUnload(lib);
  }
  r.notes.push_back(std::to_string(r.kernels_seen) + " CUDA kernels in " + std::to_string(fatbins) +
                    " fatbins of this program checked (registers, static shared memory, local memory)");
  return r;
}

#endif

}  // namespace tf::contract
