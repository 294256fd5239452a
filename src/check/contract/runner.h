#pragma once
// Runs the contract's gates over the registered kernels on one backend and prints a line per kernel
// and per control, then the SUMMARY line.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "check/contract/kernel_contract.h"

namespace tf::contract {

struct ContractOptions {
  Device backend = Device::CPU;
  std::string only;   // a family or kernel name; empty: all
  uint64_t seed = 20260101;
};

struct ContractSummary {
  int kernels = 0, pass = 0, fail = 0, known = 0;
  int controls = 0, red = 0, missed = 0;
  int limit_problems = 0;
  bool ok() const { return fail == 0 && missed == 0 && limit_problems == 0; }
};

// The kernels that `only` selects on `backend` (every kernel when `only` is empty).
std::vector<const KernelContract*> select_kernels(const std::vector<KernelContract>& all, const std::string& only,
                                                  Device backend);

// The outcome of gates 1-4 for one kernel (and its controls) on one backend.
struct KernelOutcome {
  bool pass = false;
  std::vector<std::string> problems;      // gate failures, one line each
  int controls = 0, red = 0, missed = 0;
  int limit_problems = 0;
};
KernelOutcome run_kernel_contract(const KernelContract& k, const ContractOptions& opt, std::FILE* out);

ContractSummary run_contract(const std::vector<const KernelContract*>& kernels, const ContractOptions& opt,
                             std::FILE* out);

std::string summary_line(const ContractSummary& s);

}  // namespace tf::contract
