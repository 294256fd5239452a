#include "check/contract/kernel_contract.h"

#include "check/contract/kernels/kernels.h"

namespace tf::contract {

std::vector<KernelContract>& kernel_registry() {
  static std::vector<KernelContract> r;
  return r;
}

void add_kernel(KernelContract k) { kernel_registry().push_back(std::move(k)); }

void register_all_kernels() {
  static bool done = false;
  if (done) return;
  done = true;
  register_encoder_kernels();
  register_vae_kernels();
}

}  // namespace tf::contract
