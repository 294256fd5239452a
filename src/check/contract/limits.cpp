#include "check/contract/limits.h"

#ifdef TF_HAVE_CUDA
#include <cuda_runtime.h>
#include <cxxabi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
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

// cuobjdump from the toolkit: $CUDA_HOME, then PATH, then the usual install folder.
std::string find_cuobjdump() {
  std::vector<std::string> candidates;
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/bin/cuobjdump");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/cuobjdump");
  }
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const std::string& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) return c;
  return {};
}

long field(const std::string& line, const std::string& key) {
  size_t p = line.find(key + ":");
  if (p == std::string::npos) return -1;
  return std::strtol(line.c_str() + p + key.size() + 1, nullptr, 10);
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
  r.notes.push_back(std::string(p.name) + ": sm_" + std::to_string(p.major) + std::to_string(p.minor) +
                    ", " + std::to_string(p.regsPerBlock) + " registers per block, static shared " +
                    std::to_string(p.sharedMemPerBlock) + " B per block (opt-in " +
                    std::to_string(p.sharedMemPerBlockOptin) + " B), " + std::to_string(p.maxThreadsPerBlock) +
                    " threads per block");
  std::string tool = find_cuobjdump();
  if (tool.empty()) {
    r.problems.push_back("cuobjdump not found (set CUDA_HOME): the kernels' static resources were not checked");
    return r;
  }
  std::string cmd = tool + " --dump-resource-usage /proc/" + std::to_string(::getpid()) + "/exe 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) {
    r.problems.push_back("could not run " + cmd);
    return r;
  }
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) text.append(buf, n);
  std::istringstream lines(text);
  std::string line, function;
  while (std::getline(lines, line)) {
    size_t f = line.find("Function ");
    if (f != std::string::npos) {
      function = line.substr(f + 9);
      if (!function.empty() && function.back() == ':') function.pop_back();
      continue;
    }
    if (function.empty() || line.find("REG:") == std::string::npos) continue;
    ++r.kernels_seen;
    long reg = field(line, "REG"), stack = field(line, "STACK"), shared = field(line, "SHARED"), local = field(line, "LOCAL");
    std::string who = demangle(function);
    if (reg > 255) r.problems.push_back(who + ": " + std::to_string(reg) + " registers per thread (limit 255)");
    if (shared > static_cast<long>(p.sharedMemPerBlock))
      r.problems.push_back(who + ": " + std::to_string(shared) + " B static shared memory (limit " +
                           std::to_string(p.sharedMemPerBlock) + ")");
    if (local > 0 || stack > 0)
      r.problems.push_back(who + ": local memory per thread (register spills or a stack frame): stack " +
                           std::to_string(stack) + " B, local " + std::to_string(local) + " B");
    function.clear();
  }
  r.notes.push_back(std::to_string(r.kernels_seen) + " CUDA kernels in this program checked with " + tool);
  if (r.kernels_seen == 0) r.notes.push_back("no CUDA kernel's resource usage found in this program (" + cmd + ")");
  return r;
}

#endif

}  // namespace tf::contract
