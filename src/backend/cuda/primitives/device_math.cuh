#pragma once
// Device helpers shared by the kernels: bf16 loads and round-to-nearest-even stores, torch's fp32
// activations, packed-sequence tables passed by value, and deterministic warp sums.
#include <cuda_bf16.h>

#include <cstdint>
#include <initializer_list>

#include "backend/device/seq_offsets.h"
#include "core/error.h"

namespace tf::cuda {

__device__ __forceinline__ float ld_bf16(const uint16_t* p, int64_t i) {
  return __uint_as_float(static_cast<uint32_t>(p[i]) << 16);
}
__device__ __forceinline__ float bf16_bits_to_float(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }
__device__ __forceinline__ uint16_t st_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
__device__ __forceinline__ float round_bf16(float f) { return bf16_bits_to_float(st_bf16(f)); }
// Two values rounded to bf16 in one 32-bit word, lo first (memory order): one conversion instruction
// (round to nearest even, as st_bf16's).
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// 2^x on the special-function unit alone: results below 2^-126 flush to zero (the non-flushing form
// adds a range test and two scalings around it).
__device__ __forceinline__ float exp2_flush(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// V consecutive bf16 values as floats, and back: one 16-byte access for V = 8, one 8-byte access for
// V = 4 (aligned to that size), else scalar.
template <int V>
__device__ __forceinline__ void ld_bf16x(const uint16_t* p, float (&out)[V]) {
  if constexpr (V == 8 || V == 4) {
    uint32_t u[V / 2];
    if constexpr (V == 8) {
      const uint4 w = *reinterpret_cast<const uint4*>(p);
      u[0] = w.x, u[1] = w.y, u[2] = w.z, u[3] = w.w;
    } else {
      const uint2 w = *reinterpret_cast<const uint2*>(p);
      u[0] = w.x, u[1] = w.y;
    }
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      out[2 * i] = __uint_as_float(u[i] << 16);
      out[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
    }
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = ld_bf16(p, i);
  }
}
template <int V>
__device__ __forceinline__ void st_bf16x(uint16_t* p, const float (&in)[V]) {
  if constexpr (V == 8) {
    *reinterpret_cast<uint4*>(p) = make_uint4(pack_bf16(in[0], in[1]), pack_bf16(in[2], in[3]),
                                              pack_bf16(in[4], in[5]), pack_bf16(in[6], in[7]));
  } else if constexpr (V == 4) {
    *reinterpret_cast<uint2*>(p) = make_uint2(pack_bf16(in[0], in[1]), pack_bf16(in[2], in[3]));
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = st_bf16(in[i]);
  }
}
// Whether n elements from each pointer can be walked 8 at a time with 16-byte accesses.
inline bool bf16x8_ok(int64_t n, std::initializer_list<const void*> ptrs) {
  if (n % 8 != 0) return false;
  for (const void* q : ptrs)
    if (reinterpret_cast<uintptr_t>(q) % 16 != 0) return false;
  return true;
}

// torch's fp32 silu and sigmoid: x / (1 + exp(-x)), 1 / (1 + exp(-x)) (IEEE division).
__device__ __forceinline__ float silu32(float x) { return __fdiv_rn(x, __fadd_rn(1.0f, expf(-x))); }
// The MLP's gated product of bf16 values: bf16(silu(g)) * u (the caller rounds it).
__device__ __forceinline__ float silu_gated(float g, float u) { return round_bf16(silu32(g)) * u; }
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

// A product's k-share sums at V consecutive elements (F32 [P][stride] from s), added in share order
// and rounded to bf16, as the product itself would (backend/linear/linear.h); V a multiple of 4: 16-byte
// reads (aligned to 16 bytes).
template <int V>
__device__ __forceinline__ void ld_share_sums_bf16(const float* s, int shares, int64_t stride, float (&out)[V]) {
  auto ld = [&](const float* p, float (&v)[V]) {
    if constexpr (V % 4 == 0) {
#pragma unroll
      for (int i = 0; i < V; i += 4) {
        const float4 q = *reinterpret_cast<const float4*>(p + i);
        v[i] = q.x, v[i + 1] = q.y, v[i + 2] = q.z, v[i + 3] = q.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] = p[i];
    }
  };
  ld(s, out);
  for (int q = 1; q < shares; ++q) {
    float v[V];
    ld(s + q * stride, v);
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = out[i] + v[i];
  }
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = round_bf16(out[i]);
}

// The sequence holding token t.
__device__ __forceinline__ int seq_of(const SeqTable& s, int t) {
  int i = 0;
  while (i + 1 < s.count && t >= s.offsets[i + 1]) ++i;
  return i;
}

inline unsigned blocks_for(int64_t n, int per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

}  // namespace tf::cuda
