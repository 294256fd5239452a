// attention_single_head: one head over all positions, channel-major q, k, v, o: F32 [D, N], fp32
// throughout, streaming softmax allowed. Rounding model per query i:
//   s_j = fp32(dot(q_i, k_j)) * scale;  m = max_j s_j (the kernel's m is off by at most max e(s_j));
//   t_j = exp(s_j - m), plus what a streaming softmax adds: each of at most R = N - 1 rescales
//         multiplies by exp(m_old - m_new) (4u) and rounds the product (1u), so 5u R relative;
//   l = fp32 sum of t_j;  o_c = fp32 dot(t, v_c) / l.
// CUDA (backend/attention/attention.h): both products on split-bf16 tensor cores,
// s_j = fp32(split dot(q_i, k_j)) * scale. Where d % 64 == 0 and n % 8 == 0 the softmax by 128-key tiles:
// per tile b, t_j = exp(s_j - m_b), l_b = its sum; f_b = exp(m_b - M) / sum_b l_b exp(m_b - M) (the sums in
// double: within the fp32 sums' bounds); o_c = sum over 64-key K tiles of f_b * split dot(t, v_c) over the
// K tile (a fused multiply-add: within a product and a sum's bounds). Otherwise the whole row at once:
// t_j = exp(s_j - m); l = sum of t_j; p_j = t_j / l; o_c = split dot(p, v_c).
#include "backend/attention/attention.h"
#include "backend/variants.h"
#include "check/contract/kernels/common.h"
#include "check/contract/kernels/kernels.h"

namespace tf::contract {

namespace {

Case make_case(Tensor q, Tensor k, Tensor v, double scale, std::string what) {
  Case c;
  c.label = what + " " + label({{"d", q.dim(0)}, {"n", q.dim(1)}});
  c.outputs = {host_empty(DType::F32, q.shape)};
  c.inputs = {std::move(q), std::move(k), std::move(v)};
  c.params = {scale};
  return c;
}

Case random_case(Rng& rng, int64_t d, int64_t n, double sigma = 1.0) {
  double scale = f32_of(1 / std::sqrt(static_cast<double>(d)));
  return make_case(random_normal(rng, DType::F32, {d, n}, sigma), random_normal(rng, DType::F32, {d, n}, sigma),
                   random_normal(rng, DType::F32, {d, n}), scale, "random");
}

// Token-major copy of a channel-major [d, n] input: out[i * d + ch] = x[ch, i].
std::vector<Tracked> token_major(const Tensor& x) {
  const int64_t d = x.dim(0), n = x.dim(1);
  std::vector<Tracked> v = tracked_of(x), t(v.size());
  for (int64_t ch = 0; ch < d; ++ch)
    for (int64_t i = 0; i < n; ++i) t[i * d + ch] = v[ch * n + i];
  return t;
}

Reference attention_reference(const Case& c) {
  const int64_t d = c.inputs[0].dim(0), n = c.inputs[0].dim(1);
  const Tracked scale = exact(f32_of(c.params[0]));
  std::vector<Tracked> qt = token_major(c.inputs[0]), kt = token_major(c.inputs[1]), v = tracked_of(c.inputs[2]);
  const double rescale_u = 5.0 * static_cast<double>(n - 1) * kU32;
  std::vector<Tracked> o(v.size()), s(static_cast<size_t>(n)), t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    std::span<const Tracked> qi(qt.data() + i * d, static_cast<size_t>(d));
    Tracked m{-std::numeric_limits<double>::infinity(), 0};
    for (int64_t j = 0; j < n; ++j) {
      s[j] = f32_mul(f32_dot(qi, std::span<const Tracked>(kt.data() + j * d, static_cast<size_t>(d))), scale);
      m.v = std::fmax(m.v, s[j].v);
      m.e = std::fmax(m.e, s[j].e);
    }
    for (int64_t j = 0; j < n; ++j) {
      t[j] = f32_exp(f32_sub(s[j], m));
      t[j].e += rescale_u * (std::fabs(t[j].v) + t[j].e);
    }
    Tracked l = f32_sum(t);
    for (int64_t ch = 0; ch < d; ++ch)
      o[ch * n + i] = f32_div(f32_dot(t, std::span<const Tracked>(v.data() + ch * n, static_cast<size_t>(n))), l);
  }
  return {o};
}

// The tiles' softmax and values (see the header): o[ch * n + i] for query i from its scores s.
void softmax_by_tiles(const std::vector<Tracked>& s, const std::vector<Tracked>& v, int64_t d, int64_t n, int64_t i,
                      std::vector<Tracked>& o) {
  constexpr int64_t kTile = 128, kKTile = 64;
  const int64_t tiles = (n + kTile - 1) / kTile;
  std::vector<Tracked> mb(tiles), lb(tiles), f(tiles), t(static_cast<size_t>(n)), scaled(tiles);
  Tracked big{-std::numeric_limits<double>::infinity(), 0};
  for (int64_t b = 0; b < tiles; ++b) {
    mb[b] = {-std::numeric_limits<double>::infinity(), 0};
    for (int64_t j = b * kTile; j < std::min(n, (b + 1) * kTile); ++j) {
      mb[b].v = std::fmax(mb[b].v, s[j].v);
      mb[b].e = std::fmax(mb[b].e, s[j].e);
    }
    for (int64_t j = b * kTile; j < std::min(n, (b + 1) * kTile); ++j) t[j] = f32_exp(f32_sub(s[j], mb[b]));
    lb[b] = f32_sum(std::span<const Tracked>(t.data() + b * kTile, static_cast<size_t>(std::min(n, (b + 1) * kTile) - b * kTile)));
    big.v = std::fmax(big.v, mb[b].v);
    big.e = std::fmax(big.e, mb[b].e);
  }
  for (int64_t b = 0; b < tiles; ++b) scaled[b] = f32_mul(lb[b], f32_exp(f32_sub(mb[b], big)));
  const Tracked l = f32_sum(scaled);
  for (int64_t b = 0; b < tiles; ++b) f[b] = f32_div(f32_exp(f32_sub(mb[b], big)), l);
  for (int64_t ch = 0; ch < d; ++ch) {
    Tracked acc = exact(0.0);
    for (int64_t j0 = 0; j0 < n; j0 += kKTile) {
      F32Sum dot;
      for (int64_t j = j0; j < std::min(n, j0 + kKTile); ++j) dot.add_split_bf16_product(v[ch * n + j], t[j]);
      acc = f32_add(acc, f32_mul(dot.result(), f[j0 / kTile]));
    }
    o[ch * n + i] = acc;
  }
}

Reference attention_reference_split_gemm(const Case& c) {
  const int64_t d = c.inputs[0].dim(0), n = c.inputs[0].dim(1);
  const Tracked scale = exact(f32_of(c.params[0]));
  std::vector<Tracked> qt = token_major(c.inputs[0]), kt = token_major(c.inputs[1]), v = tracked_of(c.inputs[2]);
  std::vector<Tracked> o(v.size()), s(static_cast<size_t>(n)), t(static_cast<size_t>(n));
  // the dispatch of attention_launch.cu: both products on the TMA kernel, the softmax by tiles
  const bool by_tiles = d % 64 == 0 && n % 8 == 0 && variant_is<Variant::softmax_rows>("tiles") &&
                        variant_is<Variant::channels_attention_kernel>("wgmma") &&
                        variant_is<Variant::split_operands>("auto");
  for (int64_t i = 0; i < n; ++i) {
    Tracked m{-std::numeric_limits<double>::infinity(), 0};
    for (int64_t j = 0; j < n; ++j) {
      F32Sum dot;
      for (int64_t ch = 0; ch < d; ++ch) dot.add_split_bf16_product(qt[i * d + ch], kt[j * d + ch]);
      s[j] = f32_mul(dot.result(), scale);
      m.v = std::fmax(m.v, s[j].v);
      m.e = std::fmax(m.e, s[j].e);
    }
    if (by_tiles) {
      softmax_by_tiles(s, v, d, n, i, o);
      continue;
    }
    for (int64_t j = 0; j < n; ++j) t[j] = f32_exp(f32_sub(s[j], m));
    Tracked l = f32_sum(t);
    for (int64_t j = 0; j < n; ++j) t[j] = f32_div(t[j], l);
    for (int64_t ch = 0; ch < d; ++ch) {
      F32Sum dot;
      for (int64_t j = 0; j < n; ++j) dot.add_split_bf16_product(v[ch * n + j], t[j]);
      o[ch * n + i] = dot.result();
    }
  }
  return {o};
}

// A faulty streaming softmax (blocks of 16 keys): `fault` picks the defect.
enum class Fault { MissingRescale, Bf16Probabilities, NoMaxSubtraction, TransposedInputs };

void faulty_attention(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p, Fault fault) {
  const int64_t d = in[0].dim(0), n = in[0].dim(1);
  const float scale = static_cast<float>(p[0]);
  std::vector<double> q = values_of(in[0]), k = values_of(in[1]), v = values_of(in[2]), o(q.size());
  // The transposed-read fault treats the [D, N] buffers as [N, D].
  auto at = [&](const std::vector<double>& x, int64_t ch, int64_t j) {
    return static_cast<float>(fault == Fault::TransposedInputs ? x[j * d + ch] : x[ch * n + j]);
  };
  for (int64_t i = 0; i < n; ++i) {
    float m = -INFINITY, l = 0;
    std::vector<float> acc(d, 0.0f);
    for (int64_t j0 = 0; j0 < n; j0 += 16) {
      int64_t j1 = std::min(n, j0 + 16);
      std::vector<float> s(j1 - j0);
      float mb = m;
      for (int64_t j = j0; j < j1; ++j) {
        float dot = 0;
        for (int64_t ch = 0; ch < d; ++ch) dot += at(q, ch, i) * at(k, ch, j);
        s[j - j0] = dot * scale;
        mb = std::max(mb, s[j - j0]);
      }
      if (fault == Fault::NoMaxSubtraction) mb = 0;
      float alpha = std::isinf(m) ? 0.0f : std::exp(m - mb);
      if (fault == Fault::MissingRescale) alpha = std::isinf(m) ? 0.0f : 1.0f;
      l *= alpha;
      for (float& a : acc) a *= alpha;
      for (int64_t j = j0; j < j1; ++j) {
        float pj = std::exp(s[j - j0] - mb);
        if (fault == Fault::Bf16Probabilities) pj = static_cast<float>(bf16_of(pj));
        l += pj;
        for (int64_t ch = 0; ch < d; ++ch) acc[ch] += pj * at(v, ch, j);
      }
      m = mb;
    }
    for (int64_t ch = 0; ch < d; ++ch) o[ch * n + i] = acc[ch] / l;
  }
  set_values(out[0], o);
}

HostKernel with(Fault f) {
  return [f](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) { faulty_attention(in, out, p, f); };
}

}  // namespace

void register_attention_f32_channels(bool cuda) {
  KernelContract k;
  k.name = "attention_f32_channels";
  k.families = {"flux2_vae"};
  k.backends = backends(cuda);
  k.random_cases = [](Rng& rng) {
    return std::vector<Case>{random_case(rng, 32, 63), random_case(rng, 16, 64), random_case(rng, 24, 65),
                             random_case(rng, 8, 257), random_case(rng, 5, 1),
                             // CUDA's TMA products and the softmax by tiles: a partial key tile, three tiles
                             random_case(rng, 64, 136), random_case(rng, 64, 264)};
  };
  k.adversarial_cases = [](Rng& rng) {
    std::vector<Case> cs;
    // Scores up to ~+-1000: exp overflows unless the maximum is subtracted; most weights underflow.
    cs.push_back(random_case(rng, 16, 80, 8.0));
    // Keys all equal: the softmax is exactly uniform and o is the mean of v.
    Case flat = random_case(rng, 8, 48);
    std::vector<double> kv = values_of(flat.inputs[1]);
    for (int64_t ch = 0; ch < 8; ++ch)
      for (int64_t j = 1; j < 48; ++j) kv[ch * 48 + j] = kv[ch * 48];
    set_values(flat.inputs[1], kv);
    flat.label = "equal keys d=8 n=48";
    cs.push_back(flat);
    // Rising scores: the maximum grows with every key, so a streaming softmax rescales at every block.
    Case rising = random_case(rng, 4, 96);
    std::vector<double> q(4 * 96, 0.0), kk(4 * 96, 0.0);
    for (int64_t j = 0; j < 96; ++j) {
      q[j] = 1;
      kk[j] = static_cast<double>(j) * 0.25;
    }
    set_values(rising.inputs[0], q);
    set_values(rising.inputs[1], kk);
    rising.label = "rising scores d=4 n=96";
    cs.push_back(rising);
    return cs;
  };
  k.reference = attention_reference;
  k.cuda_reference = attention_reference_split_gemm;
  k.run = [](const std::vector<Tensor>& in, std::vector<Tensor>& out, const Params& p) {
    attention(in[0], in[1], in[2], {.scale = static_cast<float>(p[0]), .mask = AttentionMask::none, .layout = AttentionLayout::channels}, out[0]);
  };
  k.controls = {
      reimplemented("missing-rescale", with(Fault::MissingRescale)),
      reimplemented("bf16-probabilities", with(Fault::Bf16Probabilities)),
      reimplemented("no-max-subtraction", with(Fault::NoMaxSubtraction)),
      reimplemented("swapped-axes", with(Fault::TransposedInputs)),
      perturbed_params("dropped-scale", [](Params& p) { p[0] = 1; }),
      perturbed_inputs("fp16-staging", [](std::vector<Tensor>& in) {
        for (int i = 0; i < 3; ++i) map_values(in[i], f16_of);
      }),
  };
  k.limit_cases = [] {
    // The mid block at 1024^2 (encoder) and 2048^2 (decoder): 512 channels, N = 16384 and 65536.
    std::vector<Case> cs;
    for (int64_t n : {16384, 65536}) {
      Case c;
      c.label = label({{"d", 512}, {"n", n}});
      for (int i = 0; i < 3; ++i) c.inputs.push_back(shape_only(DType::F32, {512, n}));
      c.outputs = {shape_only(DType::F32, {512, n})};
      c.params = {1 / std::sqrt(512.0)};
      cs.push_back(c);
    }
    return cs;
  };
  add_kernel(std::move(k));
}

}  // namespace tf::contract
