// rope_partial: y[i] = bf16(bf16(x[i] c) + bf16(rot[i] s)) on the first 2 * half dims (positions
// restart per sequence), the rest copied. bf16 x bf16 products are exact in fp32; the sum of two
// bf16 values too, unless their exponents are far apart.
#include "backend/rope/rope.h"
#include "backend/rope/rope_tables.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"
#include "check/contract/kernels/references.h"

namespace tf::contract {

std::vector<Tracked> rope_reference(const std::vector<Tracked>& x, int64_t H, int64_t D,
                                            const std::vector<Tracked>& cs, const std::vector<Tracked>& sn, int64_t half,
                                            const SeqOffsets& o) {
  std::vector<Tracked> y(x);
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t t = o[s]; t < o[s + 1]; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const Tracked* xr = x.data() + (t * H + h) * D;
        int64_t pos = t - o[s];
        for (int64_t i = 0; i < 2 * half; ++i) {
          Tracked rot = i < half ? f32_neg(xr[i + half]) : xr[i - half];
          Tracked a = round_bf16_point(f32_mul(xr[i], cs[pos * half + i % half]));
          Tracked b = round_bf16_point(f32_mul(rot, sn[pos * half + i % half]));
          y[(t * H + h) * D + i] = round_bf16_point(f32_add(a, b));
        }
      }
  return y;
}

namespace {

// params: offsets. inputs: x, cos, sin.
Case make_case(Tensor x, int64_t rotary_dim, const SeqOffsets& o, std::string what) {
  int64_t longest = 1;
  for (size_t s = 0; s + 1 < o.size(); ++s) longest = std::max(longest, o[s + 1] - o[s]);
  RopeTables tables = make_rope_tables(longest, rotary_dim, 1e7);
  Case c;
  c.label = what + " " + label({{"tokens", x.dim(0)}, {"heads", x.dim(1)}, {"head_dim", x.dim(2)}, {"rotary", rotary_dim}}) +
            " " + offsets_label(o);
  c.outputs = {host_empty(DType::BF16, x.shape)};
  c.inputs = {std::move(x), tables.cos, tables.sin};
  append_offsets(c.params, o);
  return c;
}

// fault: 0 none, 1 rotate_half with the sign on the wrong half, 2 interleaved pairs (GPT-J
// layout), 3 positions not restarted per sequence, 4 one rounding of the fp32 sum of products.
void faulty_rope(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, int fault) {
  const int64_t H = in[0].dim(1), D = in[0].dim(2), half = in[1].dim(1);
  SeqOffsets o = offsets_from(p, 0);
  std::vector<double> x = values_of(in[0]), cs = values_of(in[1]), sn = values_of(in[2]), y(x);
  for (size_t s = 0; s + 1 < o.size(); ++s)
    for (int64_t t = o[s]; t < o[s + 1]; ++t) {
      int64_t pos = fault == 3 ? std::min(t, in[1].dim(0) - 1) : t - o[s];
      for (int64_t h = 0; h < H; ++h) {
        const double* xr = x.data() + (t * H + h) * D;
        for (int64_t i = 0; i < 2 * half; ++i) {
          int64_t f = fault == 2 ? i / 2 : i % half;
          double rot = fault == 2 ? (i % 2 ? xr[i - 1] : -xr[i + 1])
                                  : (i < half ? -xr[i + half] : xr[i - half]);
          if (fault == 1) rot = -rot;
          float c = static_cast<float>(cs[pos * half + f]), sv = static_cast<float>(sn[pos * half + f]);
          float a = static_cast<float>(xr[i]) * c, b = static_cast<float>(rot) * sv;
          y[(t * H + h) * D + i] = fault == 4 ? a + b : static_cast<float>(bf16_of(a)) + static_cast<float>(bf16_of(b));
        }
      }
    }
  set_values(out[0], y);
}

}  // namespace

void register_rope(bool cuda) {
  KernelContract k;
  k.name = "rope_split_half";
  k.families = {"moss_image"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{make_case(random_normal(rng, DType::BF16, {63, 2, 64}), 16, {0, 63}, "random"),
                             make_case(random_normal(rng, DType::BF16, {65, 3, 32}), 32, {0, 30, 65}, "random"),
                             make_case(random_normal(rng, DType::BF16, {64, 1, 256}), 64, {0, 0, 64}, "random")};
  };
  k.adversarial_cases = [](Rng& rng) {
    // Halves 2^40 apart: one product vanishes in the other's rounding; long positions (big angles).
    std::vector<double> x(300 * 2 * 16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_of(rng.normal() * ((i % 16) < 4 ? 0x1p40 : 1.0));
    return std::vector<Case>{make_case(host_tensor(DType::BF16, {300, 2, 16}, x), 8, {0, 300}, "2^40 apart")};
  };
  k.reference = [](const Case& c) {
    return Reference{rope_reference(tracked_of(c.inputs[0]), c.inputs[0].dim(1), c.inputs[0].dim(2),
                                            tracked_of(c.inputs[1]), tracked_of(c.inputs[2]), c.inputs[1].dim(1),
                                            offsets_from(c.params, 0))};
  };
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    rope(in[0], {in[1], in[2]}, RopePositions::sequential(offsets_from(p, 0)), out[0]);
  };
  k.controls = {
      reimplemented("rotate-half-sign-flipped", [](auto& in, auto& out, auto& p) { faulty_rope(in, out, p, 1); }),
      reimplemented("interleaved-pairs", [](auto& in, auto& out, auto& p) { faulty_rope(in, out, p, 2); }),
      reimplemented("positions-not-restarted", [](auto& in, auto& out, auto& p) { faulty_rope(in, out, p, 3); }),
      reimplemented("dropped-product-roundings", [](auto& in, auto& out, auto& p) { faulty_rope(in, out, p, 4); }),
  };
  k.limit_cases = [] {
    Case c;
    c.label = "tokens=4096 heads=16 head_dim=256 rotary=64";
    c.inputs = {shape_only(DType::BF16, {4096, 16, 256}), shape_only(DType::BF16, {4096, 32}), shape_only(DType::BF16, {4096, 32})};
    c.outputs = {shape_only(DType::BF16, {4096, 16, 256})};
    append_offsets(c.params, single_sequence(4096));
    return std::vector<Case>{c};
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
