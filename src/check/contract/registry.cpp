#include "check/contract/kernel_contract.h"

#include "check/contract/kernels/kernels.h"
#include "core/error.h"

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
  register_every_kernel();
}

const KernelContract& registered_kernel(const std::string& name) {
  register_all_kernels();
  for (const KernelContract& k : kernel_registry())
    if (k.name == name) return k;
  fail("contract: no kernel named " + name + " is registered");
}

}  // namespace tf::contract
