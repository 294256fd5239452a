// Copies with no arithmetic: embedding (row gather) and split_query_gate (per-head halves).
// The allowance is zero everywhere: every bit must arrive.
#include "backend/embed/embedding.h"
#include "backend/attention/split_query_gate.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// Bf16 values over bf16's whole range (subnormals, +-0, huge) so any conversion shows.
Tensor wide_bf16(Rng& rng, Shape s) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (double& x : v) x = std::ldexp(rng.normal(), static_cast<int>(rng.below(260)) - 135);
  return host_tensor(DType::BF16, std::move(s), v);
}

Case embedding_case(Rng& rng, int64_t vocab, int64_t hidden, int64_t n, bool wide) {
  Case c;
  c.label = label({{"vocab", vocab}, {"hidden", hidden}, {"tokens", n}}) + (wide ? " wide range" : "");
  std::vector<double> ids(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) ids[t] = t == 0 ? 0 : t == 1 ? vocab - 1 : static_cast<double>(rng.below(vocab));
  c.inputs = {wide ? wide_bf16(rng, {vocab, hidden}) : random_normal(rng, DType::BF16, {vocab, hidden}),
              host_tensor(DType::I32, {n}, ids)};
  c.outputs = {host_empty(DType::BF16, {n, hidden})};
  return c;
}

Case split_case(Rng& rng, int64_t t, int64_t heads, int64_t d, bool wide) {
  Case c;
  c.label = label({{"tokens", t}, {"heads", heads}, {"head_dim", d}}) + (wide ? " wide range" : "");
  c.inputs = {wide ? wide_bf16(rng, {t, heads * 2 * d}) : random_normal(rng, DType::BF16, {t, heads * 2 * d})};
  c.outputs = {host_empty(DType::BF16, {t, heads, d}), host_empty(DType::BF16, {t, heads, d})};
  return c;
}

}  // namespace

void register_copies(bool cuda) {
  KernelContract e;
  e.name = "embedding";
  e.families = {"moss_image"};
  e.backends = backends(cuda);
  e.random_cases = [](Rng& rng) {
    return std::vector<Case>{embedding_case(rng, 50, 64, 63, false), embedding_case(rng, 1000, 33, 65, false)};
  };
  e.adversarial_cases = [](Rng& rng) { return std::vector<Case>{embedding_case(rng, 37, 96, 40, true)}; };
  e.reference = [](const Case& c) {
    const int64_t hidden = c.inputs[0].dim(1);
    std::vector<Tracked> table = tracked_of(c.inputs[0]), out;
    for (double id : values_of(c.inputs[1]))
      for (int64_t i = 0; i < hidden; ++i) out.push_back(table[static_cast<int64_t>(id) * hidden + i]);
    return Reference{out};
  };
  e.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { embedding(in[0], in[1], out[0]); };
  e.controls = {
      perturbed_inputs("off-by-one-ids", [](std::vector<Tensor>& in) {
        int64_t vocab = in[0].dim(0);
        map_values(in[1], [vocab](double id) { return std::fmod(id + 1, static_cast<double>(vocab)); });
      }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) { map_values(in[0], f16_of); }),
  };
  e.limit_cases = [] {
    Case c;
    c.label = "vocab=248320 hidden=4096 tokens=4096";
    c.inputs = {shape_only(DType::BF16, {248320, 4096}), shape_only(DType::I32, {4096})};
    c.outputs = {shape_only(DType::BF16, {4096, 4096})};
    return std::vector<Case>{c};
  };
  add_kernel(e);

  KernelContract s;
  s.name = "split_query_gate";
  s.families = {"moss_image"};
  s.backends = backends(cuda);
  s.random_cases = [](Rng& rng) { return std::vector<Case>{split_case(rng, 63, 2, 16, false), split_case(rng, 65, 3, 8, false)}; };
  s.adversarial_cases = [](Rng& rng) { return std::vector<Case>{split_case(rng, 5, 4, 32, true)}; };
  s.reference = [](const Case& c) {
    const int64_t t = c.outputs[0].dim(0), heads = c.outputs[0].dim(1), d = c.outputs[0].dim(2);
    std::vector<Tracked> qg = tracked_of(c.inputs[0]), q, g;
    for (int64_t r = 0; r < t * heads; ++r)
      for (int64_t i = 0; i < d; ++i) {
        q.push_back(qg[r * 2 * d + i]);
        g.push_back(qg[r * 2 * d + d + i]);
      }
    return Reference{q, g};
  };
  s.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params&) { split_query_gate(in[0], out[0], out[1]); };
  s.controls = {
      // Reading the projection as [query of all heads | gate of all heads] instead of per head.
      reimplemented("blocked-instead-of-per-head", [](auto& in, auto& out, auto&) {
        const int64_t t = out[0].dim(0), hd = out[0].dim(1) * out[0].dim(2);
        std::vector<double> qg = values_of(in[0]), q, g;
        for (int64_t r = 0; r < t; ++r)
          for (int64_t i = 0; i < hd; ++i) {
            q.push_back(qg[r * 2 * hd + i]);
            g.push_back(qg[r * 2 * hd + hd + i]);
          }
        set_values(out[0], q);
        set_values(out[1], g);
      }),
      perturbed_outputs("swapped-halves", [](auto&, std::vector<Tensor>& out) { std::swap(out[0], out[1]); }),
  };
  s.limit_cases = [] {
    Case c;
    c.label = "tokens=4096 heads=16 head_dim=256";
    c.inputs = {shape_only(DType::BF16, {4096, 8192})};
    c.outputs = {shape_only(DType::BF16, {4096, 16, 256}), shape_only(DType::BF16, {4096, 16, 256})};
    return std::vector<Case>{c};
  };
  add_kernel(std::move(s));
}

}  // namespace tf::contract
