// causal_conv1d_silu: c = bf16(sum_j w[ch, j] x[t - K + 1 + j, ch]) (fp32 sum of K exact products,
// zeros before each sequence's start), y = bf16(silu(c)).
#include "backend/conv/causal_conv1d_silu.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

namespace {

// params: offsets
Case make_case(Tensor x, Tensor w, const SeqOffsets& o, std::string what) {
  Case c;
  c.label = what + " " + label({{"tokens", x.dim(0)}, {"channels", x.dim(1)}, {"k", w.dim(2)}}) + " " + offsets_label(o);
  c.outputs = {host_empty(DType::BF16, x.shape)};
  c.inputs = {std::move(x), std::move(w)};
  append_offsets(c.params, o);
  return c;
}

Case random_case(Rng& rng, int64_t t, int64_t ch, int64_t k, SeqOffsets o) {
  return make_case(random_normal(rng, DType::BF16, {t, ch}), random_normal(rng, DType::BF16, {ch, 1, k}, 0.5), o, "random");
}

// The conv as the kernel computes it, with `fault` planted: 0 none, 1 no rounding of the conv
// output, 2 reads the future (anti-causal), 3 ignores sequence boundaries.
void faulty_conv(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, int fault) {
  const int64_t T = in[0].dim(0), C = in[0].dim(1), K = in[1].dim(2);
  SeqOffsets o = fault == 3 ? single_sequence(T) : offsets_from(p, 0);
  std::vector<double> x = values_of(in[0]), w = values_of(in[1]), y(x.size());
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t t = o[s]; t < o[s + 1]; ++t)
      for (int64_t c = 0; c < C; ++c) {
        float acc = 0;
        for (int64_t j = 0; j < K; ++j) {
          int64_t src = fault == 2 ? t + j : t - (K - 1) + j;
          if (src >= o[s] && src < o[s + 1]) acc += static_cast<float>(w[c * K + j]) * static_cast<float>(x[src * C + c]);
        }
        float cv = fault == 1 ? acc : static_cast<float>(bf16_of(acc));
        y[t * C + c] = cv / (1 + std::exp(-cv));
      }
  set_values(out[0], y);
}

}  // namespace

std::vector<Tracked> causal_conv1d_silu_reference(const std::vector<Tracked>& x, const std::vector<Tracked>& w,
                                                  int64_t C, int64_t K, const SeqOffsets& o) {
  std::vector<Tracked> y(x.size()), terms;
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t t = o[s]; t < o[s + 1]; ++t)
      for (int64_t ch = 0; ch < C; ++ch) {
        terms.clear();
        for (int64_t j = 0; j < K; ++j) {
          int64_t src = t - (K - 1) + j;
          if (src >= o[s]) terms.push_back(f32_mul(w[ch * K + j], x[src * C + ch]));
        }
        y[t * C + ch] = round_bf16_point(f32_silu(round_bf16_point(f32_sum(terms))));
      }
  return y;
}

void register_causal_conv1d_silu(bool cuda) {
  KernelContract k;
  k.name = "causal_conv1d_silu";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{random_case(rng, 63, 48, 4, {0, 63}), random_case(rng, 65, 40, 4, {0, 64, 65}),
                             random_case(rng, 70, 33, 4, {0, 2, 2, 40, 70}), random_case(rng, 3, 16, 4, {0, 3})};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Taps that cancel: w = (1, -1, 1, -1) on a signal constant over time gives exactly zero after
    // the first taps; values +-2^20 so any precision loss shows.
    const int64_t T = 20, C = 8, K = 4;
    std::vector<double> x(T * C), w(C * K);
    for (int64_t c = 0; c < C; ++c) {
      double v = (rng.below(2) ? 1 : -1) * 0x1p20 * (1 + static_cast<double>(rng.below(128)) / 128);
      for (int64_t t = 0; t < T; ++t) x[t * C + c] = c % 2 ? v : bf16_of(v + static_cast<double>(t));
      for (int64_t j = 0; j < K; ++j) w[c * K + j] = j % 2 ? -1 : 1;
    }
    return std::vector<Case>{make_case(host_tensor(DType::BF16, {T, C}, x), host_tensor(DType::BF16, {C, 1, K}, w),
                                       {0, 11, 20}, "cancelling taps")};
  };
  k.reference = [](const Case& c) {
    return Reference{causal_conv1d_silu_reference(tracked_of(c.inputs[0]), tracked_of(c.inputs[1]), c.inputs[0].dim(1),
                                                  c.inputs[1].dim(2), offsets_from(c.params, 0))};
  };
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    causal_conv1d_silu(in[0], in[1], offsets_from(p, 0), out[0]);
  };
  k.controls = {
      reimplemented("dropped-conv-rounding", [](auto& in, auto& out, auto& p) { faulty_conv(in, out, p, 1); }),
      reimplemented("anti-causal-taps", [](auto& in, auto& out, auto& p) { faulty_conv(in, out, p, 2); }),
      reimplemented("sequences-leak", [](auto& in, auto& out, auto& p) { faulty_conv(in, out, p, 3); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "tokens=4096 channels=8192 k=4";
    c.inputs = {shape_only(DType::BF16, {4096, 8192}), shape_only(DType::BF16, {8192, 1, 4})};
    c.outputs = {shape_only(DType::BF16, {4096, 8192})};
    append_offsets(c.params, single_sequence(4096));
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
