#pragma once
// One flow-matching sampling step with classifier-free guidance, in place:
//   x <- x + (sigma_next - sigma) * pred,  pred = u + g * (c - u)  (c alone without an unconditional branch)
// with c, u the branches' velocities read from a transformer head's bf16 token rows. Numerics as the
// reference's fp32 torch ops, each one rounding in its order and none fused: d = c - u, p = g * d,
// pred = u + p; dt = sigma_next - sigma; s = dt * pred; x + s (families/moss_image/sampler/update.h).
#include "core/tensor.h"

namespace tf {

// x: F32 [C, n] (channel-major latents); cond, uncond: BF16 [n, C] (token rows); uncond may be null;
// scalars: F32 [3] = {g, sigma, sigma_next} in x's device memory (so a recorded step replays for every step).
void guided_euler_step(Tensor& x, const Tensor& cond, const Tensor* uncond, const Tensor& scalars);

namespace cpu {
void guided_euler_step(Tensor& x, const Tensor& cond, const Tensor* uncond, const Tensor& scalars);
}  // namespace cpu
namespace cuda {
void guided_euler_step(Tensor& x, const Tensor& cond, const Tensor* uncond, const Tensor& scalars);
}  // namespace cuda

}  // namespace tf
