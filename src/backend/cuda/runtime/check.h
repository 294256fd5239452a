#pragma once
// For CUDA sources only: error checks that turn a failing call into a tf::Error naming the call,
// and the runtime's stream, cuBLASLt handle and device facts.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace tf::cuda {

[[noreturn]] void fail_cuda(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t s, const char* call, const char* file, int line);

cudaStream_t stream();
cublasLtHandle_t lt_handle();
void* lt_workspace();
size_t lt_workspace_bytes();
int sm_count();
size_t max_shared_per_block_optin();
// Whether the weight-streaming products launch as dependents of the kernel before them (and
// recorded work carves its tensors from an arena): TF_CUDA_PDL (backend/variants.h).
bool dependent_launches();
// The launch attribute that lets a kernel start as a programmatic dependent of the one before it.
cudaLaunchAttribute programmatic_dependence();
// A weight-streaming product lets the kernel after it start once its main loop is done; the
// DeltaNet prep, always right after its in-projection, launches as a dependent when the last product
// launched was a streaming one (it always waits, so a mark another kernel's launch left costs
// nothing): TF_CUDA_PDL and TF_CUDA_PDL_PREP both on (backend/variants.h).
void mark_streaming_launch(bool streaming);
bool launch_prep_as_dependent();

// Device memory from the stream-ordered pool, counted in memory_stats(); OutOfMemory names the
// bytes asked for and what is free.
void* device_alloc(size_t bytes, const char* what = "tensor");
void device_free(void* p);

}  // namespace tf::cuda

#define TF_CUDA(call)                                                            \
  do {                                                                           \
    cudaError_t tf_cuda_err_ = (call);                                           \
    if (tf_cuda_err_ != cudaSuccess) ::tf::cuda::fail_cuda(tf_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad launch configuration is reported with the kernel's name.
#define TF_CUDA_LAUNCH(kernel_name)                                              \
  do {                                                                           \
    cudaError_t tf_cuda_err_ = cudaGetLastError();                               \
    if (tf_cuda_err_ != cudaSuccess) ::tf::cuda::fail_cuda(tf_cuda_err_, "launch of " kernel_name, __FILE__, __LINE__); \
  } while (0)

#define TF_CUBLAS(call)                                                          \
  do {                                                                           \
    cublasStatus_t tf_cublas_st_ = (call);                                       \
    if (tf_cublas_st_ != CUBLAS_STATUS_SUCCESS) ::tf::cuda::fail_cublas(tf_cublas_st_, #call, __FILE__, __LINE__); \
  } while (0)
