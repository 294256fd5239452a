#include "check/contract/gates.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "check/contract/inputs.h"
#include "core/error.h"

namespace tf::contract {

namespace {

constexpr uint16_t kBf16QuietNaN = 0x7fc0;
constexpr uint32_t kF32QuietNaN = 0x7fc00000u;

bool is_poison(const Tensor& t, int64_t i, Poison p) {
  size_t sz = dtype_size(t.dtype);
  const unsigned char* b = static_cast<const unsigned char*>(t.data) + i * sz;
  if (p == Poison::AllOnes) {
    for (size_t k = 0; k < sz; ++k)
      if (b[k] != 0xff) return false;
    return true;
  }
  if (t.dtype == DType::BF16 || t.dtype == DType::F16) {
    uint16_t u;
    std::memcpy(&u, b, 2);
    return u == (t.dtype == DType::BF16 ? kBf16QuietNaN : 0x7e00);
  }
  if (t.dtype == DType::F32) {
    uint32_t u;
    std::memcpy(&u, b, 4);
    return u == kF32QuietNaN;
  }
  for (size_t k = 0; k < sz; ++k)
    if (b[k] != 0xa5) return false;
  return true;
}

std::string fmt(const char* f, double a, double b, double c, double d) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

}  // namespace

void poison(std::vector<Tensor>& outputs, Poison p) {
  for (Tensor& t : outputs) {
    require(t.device == Device::CPU, "contract: poison needs host outputs, got " + t.describe());
    int64_t n = t.numel();
    if (p == Poison::AllOnes) {
      std::memset(t.data, 0xff, t.nbytes());
    } else if (t.dtype == DType::BF16 || t.dtype == DType::F16) {
      uint16_t v = t.dtype == DType::BF16 ? kBf16QuietNaN : 0x7e00;
      for (int64_t i = 0; i < n; ++i) t.ptr<uint16_t>()[i] = v;
    } else if (t.dtype == DType::F32) {
      for (int64_t i = 0; i < n; ++i) t.ptr<uint32_t>()[i] = kF32QuietNaN;
    } else {
      std::memset(t.data, 0xa5, t.nbytes());
    }
  }
}

void Comparison::merge(const Comparison& o) {
  checked += o.checked;
  unwritten += o.unwritten;
  unexpected_nan += o.unexpected_nan;
  outside += o.outside;
  used = std::fmax(used, o.used);
  if (o.worst_excess > worst_excess || (worst.empty() && !o.worst.empty())) {
    worst_excess = o.worst_excess;
    worst = o.worst;
  }
}

std::string Comparison::describe() const {
  std::string s;
  if (unwritten) s += std::to_string(unwritten) + " unwritten, ";
  if (unexpected_nan) s += std::to_string(unexpected_nan) + " NaN/Inf unlike the reference, ";
  s += std::to_string(outside) + " of " + std::to_string(checked) + " outside the allowance";
  if (!worst.empty()) s += "; worst " + worst;
  return s;
}

Comparison compare(const std::vector<Tensor>& outputs, const Reference& ref, Poison used) {
  require(outputs.size() == ref.size(), "contract: the reference has " + std::to_string(ref.size()) +
                                            " outputs, the kernel " + std::to_string(outputs.size()));
  Comparison c;
  double worst_diff = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& t = outputs[o];
    std::vector<double> got = values_of(t);
    require(got.size() == ref[o].size(), "contract: reference size differs from output " + std::to_string(o) +
                                             " (" + t.describe() + ")");
    for (size_t i = 0; i < got.size(); ++i) {
      ++c.checked;
      const Tracked& r = ref[o][i];
      double g = got[i];
      bool ref_finite = std::isfinite(r.v), got_finite = std::isfinite(g);
      if (is_poison(t, static_cast<int64_t>(i), used) && !std::isnan(r.v)) {
        ++c.unwritten;
        continue;
      }
      if (ref_finite != got_finite || (!ref_finite && !(std::isnan(r.v) && std::isnan(g)) && r.v != g)) {
        // An infinite reference may be met by a kernel whose allowance is infinite too.
        if (!(ref_finite && std::isinf(r.e))) {
          ++c.unexpected_nan;
          if (c.worst_excess < std::numeric_limits<double>::infinity() || c.worst.empty()) {
            c.worst_excess = std::numeric_limits<double>::infinity();
            c.worst = "output " + std::to_string(o) + "[" + std::to_string(i) + "] = " + std::to_string(g) +
                      ", reference " + std::to_string(r.v);
          }
          continue;
        }
      }
      if (!ref_finite) continue;
      double diff = std::fabs(g - r.v);
      if (diff <= r.e) {
        if (diff > 0) c.used = std::fmax(c.used, diff / r.e);
        continue;
      }
      ++c.outside;
      double excess = r.e > 0 ? diff / r.e : std::numeric_limits<double>::infinity();
      if (excess > c.worst_excess || (excess == c.worst_excess && diff > worst_diff) || c.worst.empty()) {
        c.worst_excess = excess;
        worst_diff = diff;
        c.worst = "output " + std::to_string(o) + "[" + std::to_string(i) + "]" +
                  fmt(": %.9g vs reference %.9g, |diff| %.3g > allowance %.3g", g, r.v, diff, r.e);
      }
    }
  }
  return c;
}

bool same_bytes(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].data, b[i].data, a[i].nbytes()) != 0) return false;
  return true;
}

std::vector<Tensor> clone_host(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) {
    Tensor c = empty(t.dtype, t.shape, Device::CPU);
    copy_into(c, t);
    out.push_back(c);
  }
  return out;
}

HostRun on_backend(const RunFn& run, Device backend) {
  return [run, backend](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    if (backend == Device::CPU) {
      run(in, out, p);
      return;
    }
    std::vector<Tensor> din, dout;
    for (const Tensor& t : in) din.push_back(to_device(t, backend));
    for (const Tensor& t : out) dout.push_back(to_device(t, backend));  // carries the poison
    run(din, dout, p);
    for (size_t i = 0; i < out.size(); ++i) copy_into(out[i], dout[i]);
  };
}

}  // namespace tf::contract
