#pragma once
// Device helpers shared by the kernels: bf16 loads and round-to-nearest-even stores, torch's fp32
// activations, packed-sequence tables passed by value, and deterministic warp sums.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/seq_offsets.h"
#include "core/error.h"

namespace tf::cuda {

__device__ __forceinline__ float ld_bf16(const uint16_t* p, int64_t i) {
  return __uint_as_float(static_cast<uint32_t>(p[i]) << 16);
}
__device__ __forceinline__ float bf16_bits_to_float(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }
__device__ __forceinline__ uint16_t st_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
__device__ __forceinline__ float round_bf16(float f) { return bf16_bits_to_float(st_bf16(f)); }
// Two values rounded to bf16 in one 32-bit word, lo first (memory order).
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  return static_cast<uint32_t>(st_bf16(lo)) | (static_cast<uint32_t>(st_bf16(hi)) << 16);
}

// torch's fp32 silu and sigmoid: x / (1 + exp(-x)), 1 / (1 + exp(-x)) (IEEE division).
__device__ __forceinline__ float silu32(float x) { return __fdiv_rn(x, __fadd_rn(1.0f, expf(-x))); }
__device__ __forceinline__ float sigmoid32(float x) { return __fdiv_rn(1.0f, __fadd_rn(1.0f, expf(-x))); }

// A weight vector stored BF16 or F32.
__device__ __forceinline__ float ld_weight(const void* w, bool f32, int64_t i) {
  return f32 ? static_cast<const float*>(w)[i] : ld_bf16(static_cast<const uint16_t*>(w), i);
}

// Butterfly sum over the lanes of each aligned group of `width` lanes: every lane ends with the
// same bits (each step adds the same two values, and fp32 addition commutes).
template <int width>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = width / 2; o > 0; o /= 2) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Packed sequences as a kernel parameter: no device allocation, so launches stay capturable.
constexpr int kMaxSequences = 64;
struct SeqTable {
  int count = 0;
  int offsets[kMaxSequences + 1] = {};
};

inline SeqTable make_seq_table(const char* op, const SeqOffsets& s) {
  if (s.size() - 1 > static_cast<size_t>(kMaxSequences))
    fail(std::string(op) + ": the CUDA backend packs at most " + std::to_string(kMaxSequences) + " sequences, got " +
         std::to_string(s.size() - 1));
  SeqTable t;
  t.count = static_cast<int>(s.size()) - 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] > INT32_MAX) fail(std::string(op) + ": too many tokens for the CUDA backend");
    t.offsets[i] = static_cast<int>(s[i]);
  }
  return t;
}

// The sequence holding token t.
__device__ __forceinline__ int seq_of(const SeqTable& s, int t) {
  int i = 0;
  while (i + 1 < s.count && t >= s.offsets[i + 1]) ++i;
  return i;
}

inline unsigned blocks_for(int64_t n, int per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

}  // namespace tf::cuda
