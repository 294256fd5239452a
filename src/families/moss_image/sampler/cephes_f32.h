#pragma once
// One lane of torch's avx_mathfun.h (Cephes-derived fp32 log and sincos, after Pommier and
// Garberoglio), the functions torch.randn's Box-Muller calls on x86 with AVX2/AVX512.
//
// Numerics: every operation is one fp32 rounding, in the order the vector code performs it, and a
// multiply followed by the add or subtract that is its only use is one fused multiply-add (std::fma),
// because torch's build compiles these intrinsics with FMA contraction on (GCC's default). This
// file is built with -ffp-contract=off, so the fusions are exactly the ones written.
// Domain: log for x in (0, 1] (the Box-Muller's 1 - u), sincos for x in [0, 8192).
namespace tf::moss_image {

float torch_log_f32(float x);
void torch_sincos_f32(float x, float* s, float* c);

}  // namespace tf::moss_image
