#pragma once
// The official MOSS-Image sampling schedule (MOSSImageScheduler.set_timesteps; references.md, "The
// sampler", "Grid"): flow-matching sigmas shifted, snapped to the 1,000-step training grid.
//
// Numerics, all fp32 as the reference computes them:
// - grid(count, shift) = shift_sigma(torch.linspace(1, lower, count)), lower = shift / (1000 + shift - 1)
//   in double (a Python float) then rounded to fp32 as linspace's end;
// - torch's CPU float32 linspace: step = fp32((end - start) / (count - 1)); index i < count / 2 is
//   start + i * step, the rest end - (count - 1 - i) * step, each one fused multiply-add;
// - shift_sigma: shift * s / (1 + (shift - 1) * s), every op rounded to fp32, with shift and
//   shift - 1 (formed in double) rounded to fp32 as torch rounds a Python float; shift 1: identity;
// - the training grid is grid(1000, 1) ascending; each sigma is snapped to the nearest training sigma
//   (searchsorted left, the upper index clamped to 999; a tie goes to the lower one, distances in
//   fp32), consecutive repeats dropped (unique_consecutive), and 0 appended;
// - timesteps are fp32(sigma * 1000) for every sigma but the final 0: not integers.
// All of it is bit-identical to kohakumoss's moss_sigmas and the MLX port's sigmas_for.
#include <cstdint>
#include <vector>

namespace tf::moss_image {

constexpr int64_t kTrainingSteps = 1000;   // the training grid's size (num_train_timesteps)
constexpr int64_t kMaxSampleSteps = 100000;  // the most steps accepted: past 1000 they only repeat

// torch.linspace(start, end, count, dtype=float32) on the CPU; count in [1, 2^24].
std::vector<float> torch_linspace_f32(float start, float end, int64_t count);

// grid(count, shift) before snapping: shift_sigma(torch.linspace(1, shift / (1000 + shift - 1),
// count)) in fp32, descending (shift 1: the linspace itself). count >= 1, shift finite and > 0.
std::vector<float> shifted_sigmas(int64_t count, double shift);

// The sigmas for `steps` steps and shift `shift`, descending, ending in 0: at most steps + 1 values
// (fewer where snapping made neighbours equal). Refuses steps outside [1, kMaxSampleSteps] and a
// shift that is not finite and positive, naming the parameter.
std::vector<float> schedule_sigmas(int64_t steps, double shift);

// fp32(sigma * 1000) for each sigma but the last (the 0 the last step lands on).
std::vector<float> schedule_timesteps(const std::vector<float>& sigmas);

}  // namespace tf::moss_image
