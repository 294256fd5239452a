#pragma once
// One sampling step's arithmetic on the host (references.md, "The sampler", "Step"): classifier-free
// guidance and the flow-matching Euler update, as the official pipeline's fp32 torch ops compute them.
//
// Numerics: every op one fp32 rounding, in the reference's order, none fused (this build uses
// -ffp-contract=off, and torch runs each as its own elementwise kernel):
// - guided: pred = u + g * (c - u): d = c - u, then p = g * d, then u + p; g is a Python float
//   that torch rounds to fp32 first (g = 1 gives c only up to rounding: the pipeline skips the
//   negative branch then and uses c itself);
// - euler_step: x = x + (sigma_next - sigma) * v: dt = sigma_next - sigma in fp32, then dt * v,
//   then the add.
#include "core/tensor.h"

namespace tf::moss_image {

// uncond + g * (cond - uncond), a fresh CPU F32 tensor. cond and uncond: CPU F32 of one shape;
// g finite. Errors name the argument and what was expected.
Tensor guided(const Tensor& cond, const Tensor& uncond, double g);

// x <- x + (sigma_next - sigma) * v, in place. x and v: CPU F32 of one shape; sigmas finite.
void euler_step(Tensor& x, const Tensor& v, float sigma, float sigma_next);

}  // namespace tf::moss_image
