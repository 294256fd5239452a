#include "check/contract/kernels/common.h"

#include "check/contract/gates.h"

namespace tf::contract {

std::vector<Device> backends(bool cuda_kernel_exists) {
  std::vector<Device> d{Device::CPU};
#ifdef TF_HAVE_CUDA
  if (cuda_kernel_exists) d.push_back(Device::CUDA);
#else
  (void)cuda_kernel_exists;
#endif
  return d;
}

std::vector<Tensor> copies(const std::vector<Tensor>& ts) { return clone_host(ts); }

void map_values(Tensor& t, const std::function<double(double)>& f) {
  std::vector<double> v = values_of(t);
  for (double& x : v) x = f(x);
  set_values(t, v);
}

void store_reference(const Reference& ref, std::vector<Tensor>& out) {
  for (size_t o = 0; o < out.size(); ++o) {
    std::vector<double> v(ref[o].size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = ref[o][i].v;
    set_values(out[o], v);
  }
}

Control perturbed_inputs(std::string name, std::function<void(std::vector<Tensor>& in)> perturb) {
  return {std::move(name),
          [perturb](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, const HostRun& real) {
            std::vector<Tensor> changed = copies(in);
            perturb(changed);
            real(changed, out, p);
          },
          {}};
}

Control perturbed_outputs(std::string name,
                          std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out)> perturb) {
  return {std::move(name),
          [perturb](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, const HostRun& real) {
            real(in, out, p);
            perturb(in, out);
          },
          {}};
}

Control perturbed_params(std::string name, std::function<void(Params& p)> perturb) {
  return {std::move(name),
          [perturb](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, const HostRun& real) {
            Params changed = p;
            perturb(changed);
            real(in, out, changed);
          },
          {}};
}

Control reimplemented(std::string name, HostKernel faulty) {
  return {std::move(name), [faulty](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p,
                                    const HostRun&) { faulty(in, out, p); }, {}};
}

Control cpu_only(Control c) {
  c.only_on = {Device::CPU};
  return c;
}

Tensor shape_only(DType t, Shape s) {
  Tensor x;
  x.dtype = t;
  x.shape = std::move(s);
  return x;
}

std::string label(std::initializer_list<std::pair<const char*, int64_t>> dims) {
  std::string s;
  for (auto& [k, v] : dims) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}

}  // namespace tf::contract
