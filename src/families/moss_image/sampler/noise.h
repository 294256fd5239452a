#pragma once
// The starting noise of the official MOSS-Image pipeline: torch.randn(shape, generator=
// torch.Generator().manual_seed(seed)) on the CPU in float32, reproduced bit for bit
// (docs/perf/transformer/references.md, "The sampler", "Starting noise").
//
// Numerics, as torch 2.x on x86-64 with AVX2 or AVX512 (CPU capability "AVX2"/"AVX512"):
// - the generator is MT19937 seeded with the seed's low 32 bits (torch ignores the rest);
// - 16 or more elements: every element first gets a uniform (draw & 0xFFFFFF) * 2^-24, then each
//   block of 16 becomes normals by Box-Muller pairing j with j + 8 (radius sqrt(-2 log(1 - u_j)),
//   angle 2 pi u_{j+8}; first 8 r cos, last 8 r sin), log and sincos being torch's fp32 Cephes
//   polynomials (avx_mathfun.h) with the fused multiply-adds its compiler forms, so no libm is
//   involved and the bytes do not depend on the machine's libm; a size not a multiple of 16 redraws
//   16 fresh uniforms over the last 16 elements and redoes that block, as torch does;
// - fewer than 16 elements: torch's scalar double Box-Muller (53-bit uniforms from two draws,
//   radius sqrt(-2 log1p(-u2)), angle 2 pi u1, cos first and sin kept for the next element), each
//   rounded to fp32. This path uses libm's double log1p/sin/cos like torch does, so it is exact
//   wherever torch and this build share a libm (and nearly always elsewhere: a double result one ulp
//   off still rounds to the same float).
// Not reproduced: torch's DEFAULT CPU capability (no AVX2, e.g. ATEN_CPU_CAPABILITY=default or
// non-x86), which uses libm's float log/sin/cos for the >= 16 path and differs in the last bits.
#include <cstdint>

#include "core/tensor.h"

namespace tf::moss_image {

// A fresh CPU F32 tensor of `shape` holding torch.randn(shape, generator=
// torch.Generator().manual_seed(seed)). Any shape with a non-negative element count.
Tensor torch_randn_f32(const Shape& shape, uint64_t seed);

}  // namespace tf::moss_image
