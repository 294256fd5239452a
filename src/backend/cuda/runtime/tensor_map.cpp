#include "backend/cuda/runtime/tensor_map.h"

#include <cuda_runtime.h>

#include <string>

#include "core/error.h"

namespace tf::cuda {

namespace {

using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                            const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                            CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

Encode encoder() {
  static Encode fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !p)
      fail("tensor map: the driver does not provide cuTensorMapEncodeTiled (CUDA 12 or later needed)");
    return reinterpret_cast<Encode>(p);
  }();
  return fn;
}

}  // namespace

CUtensorMap bf16_tensor_map(const char* what, const void* base, int rank, const uint64_t* dims,
                            const uint64_t* strides, const uint32_t* box, const uint32_t* element_strides,
                            bool swizzle_64) {
  CUtensorMap map{};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, cuuint32_t(rank), const_cast<void*>(base),
                               dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               swizzle_64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    fail(std::string(what) + ": the driver refused the tensor map (CUresult " + std::to_string(int(r)) + ")");
  return map;
}

}  // namespace tf::cuda
