#include "check/contract/runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>

#include "check/contract/gates.h"
#include "check/contract/inputs.h"
#include "check/contract/limits.h"
#include "core/bytes_hash.h"
#include "core/error.h"

namespace tf::contract {

namespace {

// A stable per-kernel seed. Its start value lacks the last digit of FNV's offset basis; it stays so
// that every kernel keeps the cases it has always drawn.
uint64_t name_hash(const std::string& s) { return bytes_hash(s.data(), s.size(), 1469598103934665603ull); }

struct Prepared {
  Case c;
  Reference ref;
  const char* gate;  // "gate 2" (random) or "gate 4" (adversarial)
};

std::string short_text(const std::string& s, size_t n = 300) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// The CUDA runtime's words for a launch beyond the device's limits, when an op reports it itself.
bool looks_like_refused_launch(const std::string& e) {
  for (const char* w : {"invalid configuration", "too many resources", "out of resources", "invalid argument"})
    if (e.find(w) != std::string::npos) return true;
  return false;
}

// One run of the kernel under test on a poisoned copy of the case's outputs.
struct RunResult {
  std::vector<Tensor> outputs;
  std::string error;  // a thrown error or a refused launch
  bool launch_refused = false;
};

RunResult run_once(const HostRun& run, const Case& c, Poison p, Device backend) {
  RunResult r;
  r.outputs = clone_host(c.outputs);
  poison(r.outputs, p);
  try {
    run(c.inputs, r.outputs, c.params);
  } catch (const std::exception& e) {
    r.error = e.what();
    r.launch_refused = backend == Device::CUDA && looks_like_refused_launch(r.error);
  }
  if (backend == Device::CUDA) {
    std::string launch = launch_error_after_run();
    if (!launch.empty()) {
      r.launch_refused = true;
      r.error += (r.error.empty() ? "" : "; ") + launch;
    }
  }
  return r;
}

std::string fixed(double x, int digits = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, x);
  return b;
}

}  // namespace

std::vector<const KernelContract*> select_kernels(const std::vector<KernelContract>& all, const std::string& only,
                                                  Device backend) {
  std::vector<const KernelContract*> out;
  for (const KernelContract& k : all) {
    bool on_backend = false;
    for (Device d : k.backends) on_backend |= d == backend;
    if (!on_backend) continue;
    bool chosen = only.empty() || only == k.name;
    for (const std::string& f : k.families) chosen |= only == f;
    if (chosen) out.push_back(&k);
  }
  return out;
}

KernelOutcome run_kernel_contract(const KernelContract& k, const ContractOptions& opt, std::FILE* out) {
  auto t0 = std::chrono::steady_clock::now();
  KernelOutcome o;
  Rng rng(opt.seed ^ name_hash(k.name));
  Rng rng_random = rng.fork(2), rng_adversarial = rng.fork(4);
  HostRun real = on_backend(k.run, opt.backend);

  std::vector<Prepared> cases;
  for (Case& c : k.random_cases(rng_random)) cases.push_back({std::move(c), {}, "gate 2"});
  if (k.adversarial_cases)
    for (Case& c : k.adversarial_cases(rng_adversarial)) cases.push_back({std::move(c), {}, "gate 4"});
  const bool own_model = opt.backend == Device::CUDA && k.cuda_reference;
  for (Prepared& p : cases) p.ref = own_model ? k.cuda_reference(p.c) : k.reference(p.c);

  // Gates 1, 2 and 4 on the kernel itself.
  Comparison gate2, gate4;
  int n2 = 0, n4 = 0;
  bool gate1_ok = true;
  for (const Prepared& p : cases) {
    bool adversarial = std::strcmp(p.gate, "gate 4") == 0;
    (adversarial ? n4 : n2)++;
    RunResult a = run_once(real, p.c, Poison::QuietNaN, opt.backend);
    if (a.launch_refused) ++o.limit_problems;
    if (!a.error.empty()) {
      gate1_ok = false;
      o.problems.push_back(std::string("gate 1 (") + p.c.label + "): the kernel failed: " + short_text(a.error));
      continue;
    }
    Comparison c = compare(a.outputs, p.ref, Poison::QuietNaN);
    if (c.unwritten || c.unexpected_nan) gate1_ok = false;
    if (c.unwritten || c.unexpected_nan)
      o.problems.push_back("gate 1 (" + p.c.label + "): " + c.describe());
    else if (c.outside)
      o.problems.push_back(std::string(p.gate) + " (" + p.c.label + "): " + c.describe());
    (adversarial ? gate4 : gate2).merge(c);
    RunResult b = run_once(real, p.c, Poison::AllOnes, opt.backend);
    if (!b.error.empty() || !same_bytes(a.outputs, b.outputs)) gate1_ok = false;
    if (!b.error.empty() || !same_bytes(a.outputs, b.outputs))
      o.problems.push_back("gate 1 (" + p.c.label + "): a repeat on differently poisoned outputs is not equal byte for byte" +
                           (b.error.empty() ? "" : ": " + short_text(b.error)));
  }

  // Gate 5 on the supported sizes: launches only, on zero-filled device tensors.
  int limit_cases = 0;
  std::vector<std::string> limit_lines;
  if (opt.backend == Device::CUDA && k.limit_cases) {
    for (const Case& c : k.limit_cases()) {
      ++limit_cases;
      std::vector<Tensor> din, dout;
      try {
        for (const Tensor& t : c.inputs) din.push_back(zeros(t.dtype, t.shape, opt.backend));
        for (const Tensor& t : c.outputs) dout.push_back(zeros(t.dtype, t.shape, opt.backend));
        k.run(din, dout, c.params);
      } catch (const std::exception& e) {
        limit_lines.push_back("gate 5 (" + c.label + "): " + short_text(e.what()));
        ++o.limit_problems;
        continue;
      }
      std::string launch = launch_error_after_run();
      if (!launch.empty()) {
        limit_lines.push_back("gate 5 (" + c.label + "): " + launch);
        ++o.limit_problems;
      }
    }
  }

  o.pass = o.problems.empty();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string fams;
  for (const std::string& f : k.families) fams += (fams.empty() ? "" : ",") + f;
  const char* verdict = o.pass ? "PASS" : (k.known_finding.empty() ? "FAIL" : "KNOWN");
  std::fprintf(out, "%-6s kernel %s [%s] on %s%s: gate 1 %s; gate 2 %d cases, %lld values, worst %s of allowance; "
                    "gate 4 %d cases, worst %s of allowance%s (%.2f s)\n",
               verdict, k.name.c_str(), fams.c_str(), device_name(opt.backend),
               own_model ? " (its CUDA rounding model)" : "", gate1_ok ? "ok" : "FAILED (below)", n2,
               static_cast<long long>(gate2.checked), fixed(gate2.outside ? gate2.worst_excess : gate2.used).c_str(), n4,
               fixed(gate4.outside ? gate4.worst_excess : gate4.used).c_str(),
               limit_cases ? ("; gate 5 " + std::to_string(limit_cases) + " supported sizes launched").c_str() : "",
               secs);
  for (const std::string& p : o.problems) std::fprintf(out, "         %s\n", p.c_str());
  for (const std::string& p : limit_lines) std::fprintf(out, "LIMIT    %s: %s\n", k.name.c_str(), p.c_str());
  if (!o.pass && !k.known_finding.empty()) std::fprintf(out, "         known finding: %s\n", k.known_finding.c_str());

  // Gate 3: each control must fail gate 2 or gate 4 on some case.
  for (const Control& ctl : k.controls) {
    if (!ctl.only_on.empty() && std::find(ctl.only_on.begin(), ctl.only_on.end(), opt.backend) == ctl.only_on.end())
      continue;
    ++o.controls;
    std::string caught, error;
    for (const Prepared& p : cases) {
      std::vector<Tensor> outs = clone_host(p.c.outputs);
      poison(outs, Poison::QuietNaN);
      try {
        ctl.run(p.c.inputs, outs, p.c.params, real);
      } catch (const std::exception& e) {
        error = e.what();
        break;
      }
      Comparison c = compare(outs, p.ref, Poison::QuietNaN);
      if (!c.ok()) {
        caught = std::string(p.gate) + " (" + p.c.label + "): " + c.describe();
        break;
      }
    }
    if (!caught.empty()) {
      ++o.red;
      std::fprintf(out, "  RED    control %s/%s: %s\n", k.name.c_str(), ctl.name.c_str(), short_text(caught, 400).c_str());
    } else {
      ++o.missed;
      std::fprintf(out, "  MISSED control %s/%s: %s\n", k.name.c_str(), ctl.name.c_str(),
                   error.empty() ? "within the allowance on every case" : ("the control failed to run: " + short_text(error)).c_str());
    }
  }
  if (o.controls == 0) std::fprintf(out, "         (no controls registered for this backend)\n");
  std::fflush(out);
  return o;
}

ContractSummary run_contract(const std::vector<const KernelContract*>& kernels, const ContractOptions& opt,
                             std::FILE* out) {
  ContractSummary s;
  for (const KernelContract* k : kernels) {
    KernelOutcome o = run_kernel_contract(*k, opt, out);
    ++s.kernels;
    if (o.pass) ++s.pass;
    else if (!k->known_finding.empty()) ++s.known;
    else ++s.fail;
    s.controls += o.controls;
    s.red += o.red;
    s.missed += o.missed;
    s.limit_problems += o.limit_problems;
  }
  if (opt.backend == Device::CUDA) {
    StaticLimits st = check_static_limits();
    for (const std::string& n : st.notes) std::fprintf(out, "gate 5: %s\n", n.c_str());
    for (const std::string& p : st.problems) std::fprintf(out, "LIMIT  %s\n", p.c_str());
    s.limit_problems += static_cast<int>(st.problems.size());
  }
  return s;
}

std::string summary_line(const ContractSummary& s) {
  return "SUMMARY " + std::to_string(s.kernels) + " kernels: " + std::to_string(s.pass) + " pass gates 1-4, " +
         std::to_string(s.fail) + " fail, " + std::to_string(s.known) + " known findings; " +
         std::to_string(s.controls) + " controls: " + std::to_string(s.red) + " red as planted, " +
         std::to_string(s.missed) + " missed; " + std::to_string(s.limit_problems) + " limit problems";
}

}  // namespace tf::contract
