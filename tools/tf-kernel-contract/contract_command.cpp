// The program itself is the command: flags choose the backend and the kernels.
#include <cstdio>
#include <string>

#include "backend/device/device.h"
#include "backend/variants.h"
#include "check/contract/kernel_contract.h"
#include "check/contract/limits.h"
#include "check/contract/runner.h"
#include "common/command.h"
#include "common/seed_flag.h"
#include "core/error.h"

namespace {

// Exit code when the CUDA contract is asked for where no GPU (or no CUDA build) exists.
constexpr int kNoCudaDevice = 4;

tf::tools::RegisterCommand reg("", "run the kernel contract", [](CLI::App& c) {
  auto only = std::make_shared<std::string>();
  auto backend = std::make_shared<std::string>("cpu");
  auto list = std::make_shared<bool>(false);
  auto variants = std::make_shared<bool>(false);
  auto seed = std::make_shared<std::string>();
  c.add_option("--only", *only, "a family (moss_image, flux2_vae) or one kernel's name");
  c.add_option("--backend", *backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  c.add_flag("--list", *list, "list the registered kernels and their controls, run nothing");
  c.add_flag("--variants", *variants,
             "print the kernel variants' table (environment variables, backend/variants.h) as markdown, run nothing");
  auto* seed_flag = c.add_option("--seed", *seed, "seed of the random inputs (deterministic by default)");
  return [=]() -> int {
    using namespace tf::contract;
    if (*variants) {
      std::fputs(tf::variants::markdown().c_str(), stdout);
      return 0;
    }
    register_all_kernels();
    ContractOptions opt;
    opt.backend = *backend == "cuda" ? tf::Device::CUDA : tf::Device::CPU;
    opt.only = *only;
    if (seed_flag->count()) opt.seed = tf::tools::parse_seed("--seed", *seed);
    auto kernels = select_kernels(kernel_registry(), opt.only, opt.backend);
    if (!opt.only.empty() && kernels.empty()) {
      std::string known;
      for (const KernelContract& k : kernel_registry()) known += " " + k.name;
      tf::fail("--only " + opt.only + ": no kernel or family of that name on the " + *backend +
               " backend (families: moss_image flux2_vae; kernels:" + known + ")");
    }
    if (*list) {
      for (const KernelContract* k : kernels) {
        std::string fams;
        for (const std::string& f : k->families) fams += (fams.empty() ? "" : ",") + f;
        std::printf("%s [%s]\n", k->name.c_str(), fams.c_str());
        for (const Control& ctl : k->controls) std::printf("  control %s\n", ctl.name.c_str());
      }
      return 0;
    }
    if (opt.backend == tf::Device::CUDA) {
      std::string why;
      if (!cuda_device_present(&why)) {
        std::fprintf(stderr, "tf-kernel-contract: the CUDA contract cannot run here: %s\n", why.c_str());
        return kNoCudaDevice;
      }
      tf::select_device("cuda");
    }
    ContractSummary s = run_contract(kernels, opt, stdout);
    std::printf("%s\n", summary_line(s).c_str());
    return s.ok() ? 0 : 1;
  };
});

}  // namespace
