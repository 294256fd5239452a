#pragma once
// The gated delta rule's rounding model, cases and controls, shared by both forms' entries
// (recurrent and chunked): they compute the same op, so one allowance judges both.
#include <string>
#include <vector>

#include "backend/device/seq_offsets.h"
#include "check/contract/inputs.h"
#include "check/contract/kernel_contract.h"

namespace tf::contract {

// The fp32 recurrence's float64 reference with its norm-based allowance.
Reference gdr_reference(const Case& c);

// A case from inputs (q, k: [T, Hk, dk]; v: [T, Hv, dv]; beta, g: [T, Hv]) and packed sequences.
Case gdr_case(Tensor q, Tensor k, Tensor v, Tensor beta, Tensor g, const SeqOffsets& o, std::string what);
// Unit-norm keys and queries (as delta_net_prep makes them), sigmoid betas, mixed weak and strong decays.
Case gdr_random_case(Rng& rng, int64_t t, int64_t hk, int64_t dk, int64_t hv, int64_t dv, SeqOffsets o);
std::vector<Case> gdr_adversarial_cases(Rng& rng);
// Planted faults of the recurrence (host re-implementations) and a perturbed real kernel.
std::vector<Control> gdr_controls();
// The released geometry at the sizes the encoder runs.
std::vector<Case> gdr_limit_cases();

}  // namespace tf::contract
