#pragma once
// The contract's checks on one run of a kernel: poisoning, written-ness, finiteness, allowance.
#include <cstdint>
#include <string>
#include <vector>

#include "check/contract/kernel_contract.h"

namespace tf::contract {

// Two NaN poisons with different bit patterns, so a repeat of an unwritten output differs too.
enum class Poison { QuietNaN, AllOnes };
void poison(std::vector<Tensor>& outputs, Poison p);

// How a run's outputs compare with the reference.
struct Comparison {
  int64_t checked = 0;
  int64_t unwritten = 0;        // still the poison's bits
  int64_t unexpected_nan = 0;   // NaN/Inf where the reference is finite (or the other way round)
  int64_t outside = 0;          // finite, but further from the reference than the allowance
  double worst_excess = 0;      // max |out - ref| / allowance over outputs (inf when allowance 0)
  double used = 0;              // max |out - ref| / allowance over outputs within the allowance
  std::string worst;            // where and by how much, for the report
  bool ok() const { return unwritten == 0 && unexpected_nan == 0 && outside == 0; }
  void merge(const Comparison& o);
  std::string describe() const;
};

Comparison compare(const std::vector<Tensor>& outputs, const Reference& ref, Poison used);

// True when two runs' outputs are equal byte for byte.
bool same_bytes(const std::vector<Tensor>& a, const std::vector<Tensor>& b);

// Host copies (fresh storage) of host tensors.
std::vector<Tensor> clone_host(const std::vector<Tensor>& ts);

// Runs `run` on `backend`: copies the host inputs and the (poisoned) host outputs there, runs,
// and copies the outputs back into `out`.
HostRun on_backend(const RunFn& run, Device backend);

}  // namespace tf::contract
