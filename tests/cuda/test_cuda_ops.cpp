// Every encoder op on CUDA against the same op on the CPU (fresh random inputs, packed sequences,
// sizes around the chunk edges), and CUDA repeats byte for byte. The CPU ops are checked against
// float64 elsewhere; here a difference of more than a few bf16 steps means a wrong kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/attention/attention.h"
#include "backend/attention/attention_query_key_prep.h"
#include "backend/conv/causal_conv1d_silu.h"
#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"
#include "backend/delta_rule/delta_net_prep.h"
#include "backend/embed/embedding.h"
#include "backend/delta_rule/gated_delta_rule.h"
#include "backend/linear/linear.h"
#include "backend/elementwise/residual_add.h"
#include "backend/norm/rms_norm_gated.h"
#include "backend/norm/rms_norm.h"
#include "backend/norm/rms_norm_modulate.h"
#include "backend/rope/rope.h"
#include "backend/rope/rope_tables.h"
#include "backend/elementwise/sigmoid_gate.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/attention/split_query_gate.h"
#include "check/compare.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/error.h"
#include "cuda_test_util.h"

namespace tf {
namespace {

Tensor rnd(DType dt, Shape s, uint32_t seed, float scale = 1.0f, float mean = 0.0f) {
  return check::random_normal_tensor(dt, std::move(s), seed, scale, mean);
}

Tensor gpu(const Tensor& t) { return to_device(t, Device::CUDA); }
Tensor host(const Tensor& t) { return to_device(t, Device::CPU); }
Tensor like_gpu(const Tensor& t) { return empty(t.dtype, t.shape, Device::CUDA); }

float value(const Tensor& t, int64_t i) {
  return t.dtype == DType::BF16 ? to_float(t.ptr<bf16>()[i]) : t.ptr<float>()[i];
}

// Elements may differ by `ulps` bf16 steps of the larger magnitude (plus `floor` absolute).
struct Diff {
  int64_t bad = 0, first = -1;
  double worst = 0;
};
Diff compare(const Tensor& cpu, const Tensor& cuda_back, double ulps, double floor = 1e-6) {
  Diff d;
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    double a = value(cpu, i), b = value(cuda_back, i);
    double mag = std::max(std::fabs(a), std::fabs(b));
    double allow = ulps * (mag > 0 ? std::ldexp(1.0, std::ilogb(mag) - 7) : 0.0) + floor;
    double e = std::fabs(a - b);
    if (!(e <= allow)) {
      if (d.first < 0) d.first = i;
      ++d.bad;
    }
    if (e > d.worst) d.worst = e;
  }
  return d;
}

void expect_close(const char* what, const Tensor& cpu, const Tensor& dev, double ulps, double floor = 1e-6) {
  Tensor back = host(dev);
  Diff d = compare(cpu, back, ulps, floor);
  EXPECT_EQ(d.bad, 0) << what << ": " << d.bad << " of " << cpu.numel() << " elements off, first at " << d.first
                      << " (cpu " << (d.first >= 0 ? value(cpu, d.first) : 0) << ", cuda "
                      << (d.first >= 0 ? value(back, d.first) : 0) << "), worst abs " << d.worst;
}

bool same_bytes(const Tensor& a, const Tensor& b) { return check::same_bytes(host(a), host(b)); }

TEST(CudaOps, EmbeddingAndElementwise) {
  TF_REQUIRE_CUDA_GPU();
  Tensor table = rnd(DType::BF16, {50, 24}, 1);
  Tensor ids = empty(DType::I32, {7});
  for (int i = 0; i < 7; ++i) ids.ptr<int32_t>()[i] = (i * 13) % 50;
  Tensor out = empty(DType::BF16, {7, 24});
  embedding(table, ids, out);
  Tensor dout = empty(DType::BF16, {7, 24}, Device::CUDA);
  embedding(gpu(table), gpu(ids), dout);
  EXPECT_TRUE(same_bytes(out, dout));
  ids.ptr<int32_t>()[3] = 50;
  EXPECT_THROW(embedding(gpu(table), gpu(ids), dout), Error);
  // ids the caller checked: no host round trip, a bad id's row is zeros, as on the CPU
  embedding(table, ids, out, IdCheck::by_caller);
  embedding(gpu(table), gpu(ids), dout, IdCheck::by_caller);
  EXPECT_TRUE(same_bytes(out, dout));
  ids.ptr<int32_t>()[5] = -1;
  embedding(table, ids, out, IdCheck::by_caller);
  embedding(gpu(table), gpu(ids), dout, IdCheck::by_caller);
  EXPECT_TRUE(same_bytes(out, dout));

  Tensor a = rnd(DType::BF16, {33, 100}, 2, 3.0f), b = rnd(DType::BF16, {33, 100}, 3, 3.0f);
  Tensor y = empty(DType::BF16, a.shape), dy = like_gpu(a);
  silu_gated_product(a, b, y);
  silu_gated_product(gpu(a), gpu(b), dy);
  expect_close("silu_gated_product", y, dy, 1);
  sigmoid_gate(a, b, y);
  sigmoid_gate(gpu(a), gpu(b), dy);
  expect_close("sigmoid_gate", y, dy, 1);
  Tensor h = a, dh = gpu(a);
  h = empty(DType::BF16, a.shape);
  std::memcpy(h.data, a.data, a.nbytes());
  residual_add(h, b);
  residual_add(dh, gpu(b));
  EXPECT_TRUE(same_bytes(h, dh));

  Tensor qg = rnd(DType::BF16, {5, 3 * 2 * 8}, 4);
  Tensor q = empty(DType::BF16, {5, 3, 8}), g = empty(DType::BF16, {5, 3, 8});
  Tensor dq = like_gpu(q), dg = like_gpu(g);
  split_query_gate(qg, q, g);
  split_query_gate(gpu(qg), dq, dg);
  EXPECT_TRUE(same_bytes(q, dq));
  EXPECT_TRUE(same_bytes(g, dg));
}

TEST(CudaOps, Norms) {
  TF_REQUIRE_CUDA_GPU();
  for (int64_t d : {4096, 256, 100}) {
    for (DType wt : {DType::BF16, DType::F32}) {
      Tensor x = rnd(DType::BF16, {9, d}, 5, 2.0f), w = rnd(wt, {d}, 6, 0.3f), delta = rnd(DType::BF16, {9, d}, 7);
      Tensor y = empty(DType::BF16, x.shape), dy = like_gpu(x);
      rms_norm(x, w, {NormWeight::one_plus, 1e-6f}, y);
      rms_norm(gpu(x), gpu(w), {NormWeight::one_plus, 1e-6f}, dy);
      expect_close("rms_norm_zero_centred", y, dy, 1);
      Tensor dy2 = like_gpu(x);
      rms_norm(gpu(x), gpu(w), {NormWeight::one_plus, 1e-6f}, dy2);
      EXPECT_TRUE(same_bytes(dy, dy2));

      Tensor h = empty(DType::BF16, x.shape);
      std::memcpy(h.data, x.data, x.nbytes());
      Tensor dh = gpu(x);
      residual_add_rms_norm(h, delta, w, {NormWeight::one_plus, 1e-6f}, y);
      residual_add_rms_norm(dh, gpu(delta), gpu(w), {NormWeight::one_plus, 1e-6f}, dy);
      EXPECT_TRUE(same_bytes(h, dh)) << "fused residual";
      expect_close("residual_add_rms_norm_zero_centred", y, dy, 1);

      // a product's k-share sums as the residual: the add itself is exact arithmetic, so the same bytes
      Tensor shares = rnd(DType::F32, {3, 9, d}, 11), h2 = empty(DType::BF16, x.shape), h3 = empty(DType::BF16, x.shape);
      std::memcpy(h2.data, x.data, x.nbytes());
      std::memcpy(h3.data, x.data, x.nbytes());
      Tensor dh2 = gpu(x), dh3 = gpu(x);
      residual_add(h2, shares);
      residual_add(dh2, gpu(shares));
      EXPECT_TRUE(same_bytes(h2, dh2)) << "residual_add of k-share sums";
      residual_add_rms_norm(h3, shares, w, {NormWeight::one_plus, 1e-6f}, y);
      residual_add_rms_norm(dh3, gpu(shares), gpu(w), {NormWeight::one_plus, 1e-6f}, dy);
      EXPECT_TRUE(same_bytes(h3, dh3)) << "fused residual of k-share sums";
      EXPECT_TRUE(same_bytes(h2, h3));
      expect_close("residual_add_rms_norm_zero_centred (k-share sums)", y, dy, 1);

      Tensor gx = rnd(DType::BF16, {40, 128}, 8), gz = rnd(DType::BF16, {40, 128}, 9, 2.0f);
      Tensor gw = rnd(wt, {128}, 10, 0.5f, 1.0f);
      Tensor gy = empty(DType::BF16, gx.shape), dgy = like_gpu(gx);
      rms_norm_gated(gx, gz, gw, 1e-6f, gy);
      rms_norm_gated(gpu(gx), gpu(gz), gpu(gw), 1e-6f, dgy);
      expect_close("rms_norm_gated", gy, dgy, 1);
    }
  }
}

// The transformer's rows (3,072: 128 threads a row, 24 values a thread), the encoder's width and a
// row of scalars: the fused op's bytes are the CUDA steps', and within a step of the CPU's norm.
TEST(CudaOps, GatedResidualModulatedNormGivesTheStepsBytes) {
  TF_REQUIRE_CUDA_GPU();
  for (auto [rows, d] : {std::pair<int64_t, int64_t>{301, 3072}, {9, 4096}, {7, 100}}) {
    SCOPED_TRACE(testing::Message() << rows << " x " << d);
    Tensor h = rnd(DType::BF16, {rows, d}, 40, 2.0f), delta = rnd(DType::BF16, {rows, d}, 41), gate = rnd(DType::BF16, {d}, 42, 0.5f);
    Tensor w = rnd(DType::BF16, {d}, 43, 0.3f), shift = rnd(DType::BF16, {d}, 44), scale = rnd(DType::BF16, {d}, 45, 0.5f);
    Tensor dh1 = gpu(h), dy1 = like_gpu(h), dh2 = gpu(h), dy2 = like_gpu(h);
    const Tensor dgate = gpu(gate);
    residual_add(dh1, gpu(delta), &dgate);
    rms_norm_modulate(dh1, gpu(w), 1e-6f, gpu(shift), gpu(scale), dy1);
    residual_add_rms_norm_modulate(dh2, gpu(delta), gpu(gate), gpu(w), 1e-6f, gpu(shift), gpu(scale), dy2);
    EXPECT_TRUE(same_bytes(dh1, dh2)) << "the gated add";
    EXPECT_TRUE(same_bytes(dy1, dy2)) << "the modulated norm";
    Tensor ch = empty(DType::BF16, h.shape), cy = empty(DType::BF16, h.shape);
    copy_into(ch, h);
    residual_add_rms_norm_modulate(ch, delta, gate, w, 1e-6f, shift, scale, cy);
    EXPECT_TRUE(same_bytes(ch, dh2)) << "the gated add on both backends";
    // the two sums' orders differ, so r by a few fp32 steps: near-cancelling n (1 + scale) + shift keeps that
    // absolute error (terms ~1), not a relative one
    expect_close("residual_add_rms_norm_modulate", cy, dy2, 1, 1e-5);
  }
}

TEST(CudaOps, DeltaNet) {
  TF_REQUIRE_CUDA_GPU();
  const int64_t Hk = 2, dk = 128, Hv = 4, dv = 128, C = 2 * Hk * dk + Hv * dv;
  const SeqOffsets seqs = {0, 65, 65, 135};  // a chunk edge, an empty sequence, a second sequence
  const int64_t T = seqs.back();
  Tensor x = rnd(DType::BF16, {T, C}, 11), w = rnd(DType::BF16, {C, 1, 4}, 12, 0.5f);
  Tensor mixed = empty(DType::BF16, {T, C}), dmixed = empty(DType::BF16, {T, C}, Device::CUDA);
  causal_conv1d_silu(x, w, seqs, mixed);
  causal_conv1d_silu(gpu(x), gpu(w), seqs, dmixed);
  expect_close("causal_conv1d_silu", mixed, dmixed, 1);

  Tensor b = rnd(DType::BF16, {T, Hv}, 13), a = rnd(DType::BF16, {T, Hv}, 14);
  Tensor A_log = rnd(DType::F32, {Hv}, 15, 0.5f), dt_bias = rnd(DType::BF16, {Hv}, 16);
  Tensor q = empty(DType::F32, {T, Hk, dk}), k = empty(DType::F32, {T, Hk, dk}), v = empty(DType::F32, {T, Hv, dv});
  Tensor beta = empty(DType::F32, {T, Hv}), g = empty(DType::F32, {T, Hv});
  Tensor dq = like_gpu(q), dk_ = like_gpu(k), dv_ = like_gpu(v), dbeta = like_gpu(beta), dg = like_gpu(g);
  delta_net_prep(mixed, b, a, A_log, dt_bias, q, k, v, beta, g);
  Tensor gm = gpu(mixed);
  delta_net_prep(gm, gpu(b), gpu(a), gpu(A_log), gpu(dt_bias), dq, dk_, dv_, dbeta, dg);
  expect_close("delta_net_prep q", q, dq, 0.01, 1e-7);
  expect_close("delta_net_prep k", k, dk_, 0.01, 1e-7);
  EXPECT_TRUE(same_bytes(v, dv_));
  EXPECT_TRUE(same_bytes(beta, dbeta));
  expect_close("delta_net_prep g", g, dg, 0.01, 1e-7);

  // the rule itself on the CPU's inputs, so only its own arithmetic differs
  Tensor o = empty(DType::BF16, {T, Hv, dv}), d_o = empty(DType::BF16, {T, Hv, dv}, Device::CUDA);
  gated_delta_rule(q, k, v, beta, g, seqs, o);
  Tensor gq = gpu(q), gk = gpu(k), gv = gpu(v), gb = gpu(beta), gg = gpu(g);
  gated_delta_rule(gq, gk, gv, gb, gg, seqs, d_o);
  expect_close("gated_delta_rule", o, d_o, 2, 1e-4);
  Tensor d_o2 = like_gpu(d_o);
  gated_delta_rule(gq, gk, gv, gb, gg, seqs, d_o2);
  EXPECT_TRUE(same_bytes(d_o, d_o2));
}

// The fused inputs op gives the bytes of the CUDA conv then the CUDA prep: the released geometry's
// vector reads (K = 4) and the one-channel path (K = 3, a row width not in eights), packed prompts;
// and the long prompts' path (the two kernels inside the op).
TEST(CudaOps, ConvThenPrepInOneOpGivesTheTwoStepsBytes) {
  TF_REQUIRE_CUDA_GPU();
  struct Geometry {
    int64_t Hk, dk, Hv, dv, K;
    SeqOffsets seqs;
  };
  const SeqOffsets packed = {0, 2, 2, 70, 75}, long_pair = {0, 150, 600};
  for (const Geometry& G : {Geometry{2, 128, 4, 128, 4, packed}, Geometry{3, 20, 2, 9, 3, packed},
                            Geometry{1, 160, 2, 16, 4, packed}, Geometry{2, 128, 4, 128, 4, long_pair}}) {
    const int64_t C = 2 * G.Hk * G.dk + G.Hv * G.dv;
    const SeqOffsets& seqs = G.seqs;
    const int64_t T = seqs.back();
    Tensor x = gpu(rnd(DType::BF16, {T, C}, 31)), w = gpu(rnd(DType::BF16, {C, 1, G.K}, 32, 0.5f));
    Tensor b = gpu(rnd(DType::BF16, {T, G.Hv}, 33)), a = gpu(rnd(DType::BF16, {T, G.Hv}, 34));
    Tensor A_log = gpu(rnd(DType::F32, {G.Hv}, 35, 0.5f)), dt_bias = gpu(rnd(DType::BF16, {G.Hv}, 36));
    auto outputs = [&] {
      return std::vector<Tensor>{empty(DType::F32, {T, G.Hk, G.dk}, Device::CUDA), empty(DType::F32, {T, G.Hk, G.dk}, Device::CUDA),
                                 empty(DType::F32, {T, G.Hv, G.dv}, Device::CUDA), empty(DType::F32, {T, G.Hv}, Device::CUDA),
                                 empty(DType::F32, {T, G.Hv}, Device::CUDA)};
    };
    std::vector<Tensor> one = outputs(), two = outputs();
    causal_conv1d_silu_delta_net_prep(x, w, seqs, b, a, A_log, dt_bias, one[0], one[1], one[2], one[3], one[4]);
    Tensor conv = empty(DType::BF16, {T, C}, Device::CUDA);
    causal_conv1d_silu(x, w, seqs, conv);
    delta_net_prep(conv, b, a, A_log, dt_bias, two[0], two[1], two[2], two[3], two[4]);
    for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(same_bytes(one[i], two[i])) << "output " << i << " dk " << G.dk;
  }
}

// The prep's block layout follows the prompt's length (a job's own blocks for short prompts, a few
// blocks a token doing every job, one block a token for long ones); the bytes of a prompt's rows do
// not: its first 75 tokens alone, packed before 52 or 225 more, at the released geometry.
TEST(CudaOps, DeltaNetPrepBytesDoNotDependOnTheBlockLayout) {
  TF_REQUIRE_CUDA_GPU();
  const int64_t Hk = 16, dk = 128, Hv = 32, dv = 128, C = 2 * Hk * dk + Hv * dv, first = 75;
  auto rows = [](const Tensor& t, int64_t n) {  // the first n rows of a host tensor
    Shape s = t.shape;
    s[0] = n;
    Tensor r = empty(t.dtype, s);
    std::memcpy(r.data, t.data, r.nbytes());
    return r;
  };
  Tensor x = rnd(DType::BF16, {300, C}, 41), b = rnd(DType::BF16, {300, Hv}, 43), a = rnd(DType::BF16, {300, Hv}, 44);
  Tensor w = gpu(rnd(DType::BF16, {C, 1, 4}, 42, 0.5f));
  Tensor A_log = gpu(rnd(DType::F32, {Hv}, 45, 0.5f)), dt_bias = gpu(rnd(DType::BF16, {Hv}, 46));
  auto nans = [](Shape s) {  // outputs start as NaN, so a job no block did shows
    Tensor t = empty(DType::F32, std::move(s));
    std::memset(t.data, 0xff, t.nbytes());
    return gpu(t);
  };
  auto prep = [&](int64_t T) {
    std::vector<Tensor> out{nans({T, Hk, dk}), nans({T, Hk, dk}), nans({T, Hv, dv}), nans({T, Hv}), nans({T, Hv})};
    const SeqOffsets seqs = T == first ? SeqOffsets{0, first} : SeqOffsets{0, first, T};
    causal_conv1d_silu_delta_net_prep(gpu(rows(x, T)), w, seqs, gpu(rows(b, T)), gpu(rows(a, T)), A_log, dt_bias,
                                      out[0], out[1], out[2], out[3], out[4]);
    for (Tensor& t : out) t = rows(host(t), first);
    return out;
  };
  const std::vector<Tensor> alone = prep(first);
  for (int64_t T : {127, 300}) {
    const std::vector<Tensor> packed = prep(T);
    for (size_t i = 0; i < alone.size(); ++i) {
      EXPECT_TRUE(check::same_bytes(alone[i], packed[i])) << "output " << i << ", " << T << " tokens";
      const float* p = packed[i].ptr<float>();
      EXPECT_TRUE(std::all_of(p, p + packed[i].numel(), [](float v) { return std::isfinite(v); })) << "output " << i;
    }
  }
}

TEST(CudaOps, RopeAndAttention) {
  TF_REQUIRE_CUDA_GPU();
  for (int64_t d : {256, 128, 64, 48, 16}) {  // 256, 128, 64: wgmma; 48: the scalar kernel; 16: mma.sync
    const int64_t Hq = 4, Hkv = 2, half = d / 8;
    const SeqOffsets seqs = {0, 37, 170};  // the second spans three 64-row tiles
    const int64_t T = seqs.back();
    RopeTables rt = make_rope_tables(256, 2 * half, 1e7);
    Tensor x = rnd(DType::BF16, {T, Hq, d}, 20);
    Tensor y = empty(DType::BF16, x.shape), dy = like_gpu(x);
    rope(x, {rt.cos, rt.sin}, RopePositions::sequential(seqs), y);
    Tensor dcos = gpu(rt.cos), dsin = gpu(rt.sin);
    rope(gpu(x), {dcos, dsin}, RopePositions::sequential(seqs), dy);
    expect_close("rope_partial", y, dy, 0);
    Tensor in_place = gpu(x);
    rope(in_place, {dcos, dsin}, RopePositions::sequential(seqs), in_place);
    EXPECT_TRUE(same_bytes(in_place, dy)) << "rope in place";

    Tensor q = rnd(DType::BF16, {T, Hq, d}, 21), k = rnd(DType::BF16, {T, Hkv, d}, 22),
           v = rnd(DType::BF16, {T, Hkv, d}, 23);
    Tensor o = empty(DType::BF16, q.shape), d_o = like_gpu(q), d_o2 = like_gpu(q);
    const float scale = 1.0f / std::sqrt(float(d));
    attention(q, k, v, {.scale = scale, .sequences = seqs}, o);
    Tensor gq = gpu(q), gk = gpu(k), gv = gpu(v);
    attention(gq, gk, gv, {.scale = scale, .sequences = seqs}, d_o);
    // one p = bf16(exp(s - m) / l) may round the other way when l's fp32 sum order differs: that
    // moves an output by one bf16 step of p times |v| (v ~ N(0, 1) here)
    expect_close("attention_causal_gqa", o, d_o, 2, 1e-2);
    attention(gq, gk, gv, {.scale = scale, .sequences = seqs}, d_o2);
    EXPECT_TRUE(same_bytes(d_o, d_o2));
  }
}

// Gated attention's query and key preparation in one op gives the bytes of the CUDA steps (split,
// the two norms, the two ropes): the one-launch kernel at head dims 256 and 512 (the released
// geometry: 256 with 2 half = 64), packed prompts, bf16 and f32 norm weights; and the steps' own
// kernels where it does not apply (2 half = 12, head dim 128).
TEST(CudaOps, AttentionQueryKeyPrepGivesTheStepsBytes) {
  TF_REQUIRE_CUDA_GPU();
  struct Geometry {
    int64_t d, half;
    DType w;
  };
  for (Geometry G : {Geometry{256, 32, DType::BF16}, Geometry{512, 64, DType::F32}, Geometry{256, 128, DType::BF16},
                     Geometry{256, 6, DType::BF16}, Geometry{128, 16, DType::BF16}}) {
    const int64_t Hq = 16, Hkv = 4, d = G.d;
    const SeqOffsets seqs = {0, 75, 85};
    const int64_t T = seqs.back();
    RopeTables rt = make_rope_tables(128, 2 * G.half, 1e7);
    Tensor qg = gpu(rnd(DType::BF16, {T, Hq * 2 * d}, 81, 2.0f)), kraw = gpu(rnd(DType::BF16, {T, Hkv * d}, 82, 0.5f));
    Tensor qn = gpu(rnd(G.w, {d}, 83, 0.3f)), kn = gpu(rnd(G.w, {d}, 84, 0.3f)), cos = gpu(rt.cos), sin = gpu(rt.sin);
    Tensor q = empty(DType::BF16, {T, Hq, d}, Device::CUDA), k = empty(DType::BF16, {T, Hkv, d}, Device::CUDA),
           gate = like_gpu(q);
    attention_query_key_prep(qg, kraw, qn, kn, 1e-6f, cos, sin, seqs, q, k, gate);
    Tensor query = like_gpu(q), gate2 = like_gpu(q), q2 = like_gpu(q), k2 = like_gpu(k);
    split_query_gate(qg, query, gate2);
    Tensor q_rows = q2.reshaped({T * Hq, d}), k_rows = k2.reshaped({T * Hkv, d});
    rms_norm(query.reshaped({T * Hq, d}), qn, {NormWeight::one_plus, 1e-6f}, q_rows);
    rms_norm(kraw.reshaped({T * Hkv, d}), kn, {NormWeight::one_plus, 1e-6f}, k_rows);
    rope(q2, {cos, sin}, RopePositions::sequential(seqs), q2);
    rope(k2, {cos, sin}, RopePositions::sequential(seqs), k2);
    EXPECT_TRUE(same_bytes(q, q2)) << "q, d " << d << " half " << G.half;
    EXPECT_TRUE(same_bytes(k, k2)) << "k, d " << d << " half " << G.half;
    EXPECT_TRUE(same_bytes(gate, gate2)) << "gate, d " << d << " half " << G.half;
  }
}

// A packed prompt's rows do not depend on the next prompt's keys and values, even non-finite ones: a
// key tile that runs past a prompt's last key may hold the next prompt's rows (TMA brings whole
// tiles), and 0 x inf would poison p V unless those value rows are zeros.
TEST(CudaOps, AttentionRowsIgnoreTheNextPromptsKeysAndValues) {
  TF_REQUIRE_CUDA_GPU();
  for (int64_t d : {256, 128, 64, 16}) {  // wgmma and mma.sync
    const int64_t Hq = 4, Hkv = 2, T = 170;
    const SeqOffsets seqs = {0, 37, 100, T};  // the first two prompts end inside a key tile
    Tensor q = gpu(rnd(DType::BF16, {T, Hq, d}, 51)), k = rnd(DType::BF16, {T, Hkv, d}, 52),
           v = rnd(DType::BF16, {T, Hkv, d}, 53);
    Tensor o = like_gpu(q), poisoned_o = like_gpu(q);
    const float scale = 1.0f / std::sqrt(float(d));
    attention(q, gpu(k), gpu(v), {.scale = scale, .sequences = seqs}, o);
    Tensor bad_k = empty(k.dtype, k.shape), bad_v = empty(v.dtype, v.shape);
    copy_into(bad_k, k);
    copy_into(bad_v, v);
    const uint16_t inf = 0x7f80, nan = 0x7fc0;
    for (int64_t i = seqs[2] * Hkv * d; i < T * Hkv * d; ++i) {  // the last prompt's keys and values
      bad_k.ptr<uint16_t>()[i] = nan;
      bad_v.ptr<uint16_t>()[i] = i % 2 ? inf : nan;
    }
    attention(q, gpu(bad_k), gpu(bad_v), {.scale = scale, .sequences = seqs}, poisoned_o);
    const int64_t row = Hq * d * int64_t(sizeof(uint16_t));
    Tensor a = host(o), b = host(poisoned_o);
    EXPECT_EQ(std::memcmp(a.data, b.data, size_t(seqs[2] * row)), 0) << "d " << d << ": the first two prompts' rows changed";
  }
}

TEST(CudaOps, LinearThroughTheDispatcher) {
  TF_REQUIRE_CUDA_GPU();
  Tensor x = rnd(DType::BF16, {19, 300}, 30), w = rnd(DType::BF16, {70, 300}, 31, 0.1f);
  Tensor y = empty(DType::BF16, {19, 70}), dy = empty(DType::BF16, {19, 70}, Device::CUDA);
  linear(x, w, y);
  linear(gpu(x), gpu(w), dy);
  expect_close("linear", y, dy, 1);
}

TEST(CudaOps, LinearKShareSumsThroughTheDispatcher) {
  TF_REQUIRE_CUDA_GPU();
  // the released out / o shape: the device's share count, each share close to the CPU's sum of the
  // same k range, refused with another count; none above the packed-rows limit
  const int64_t m = 20, K = 4096, N = 4096;
  const int64_t P = linear_k_shares(Device::CUDA, m, K, N);
  ASSERT_GE(P, 2);
  EXPECT_EQ(linear_k_shares(Device::CUDA, kLinearPackedRows + 1, K, N), 0);
  EXPECT_EQ(linear_k_shares(Device::CUDA, 1, K, N), P) << "fixed by the shapes, not the rows";
  Tensor x = rnd(DType::BF16, {m, K}, 60), w = rnd(DType::BF16, {N, K}, 61, 0.02f);
  Tensor s = empty(DType::F32, {P, m, N}), ds = empty(DType::F32, {P, m, N}, Device::CUDA);
  linear(x, w, s);
  linear(gpu(x), gpu(w), ds);
  expect_close("linear k-share sums", s, ds, 0, 1e-4);
  Tensor wrong = empty(DType::F32, {P * 2, m, N}, Device::CUDA);
  EXPECT_THROW(linear(gpu(x), gpu(w), wrong), Error);
}

TEST(CudaOps, ComparisonCatchesAPlantedFault) {
  TF_REQUIRE_CUDA_GPU();
  // attention with the sequences' boundary ignored must fail the same comparison
  const int64_t T = 20, d = 64;
  Tensor q = rnd(DType::BF16, {T, 2, d}, 40), k = rnd(DType::BF16, {T, 1, d}, 41), v = rnd(DType::BF16, {T, 1, d}, 42);
  Tensor o = empty(DType::BF16, q.shape), d_o = like_gpu(q);
  attention(q, k, v, {.scale = 0.125f, .sequences = {0, 8, 20}}, o);
  attention(gpu(q), gpu(k), gpu(v), {.scale = 0.125f, .sequences = {0, 20}}, d_o);
  Diff diff = compare(o, host(d_o), 2, 1e-3);
  EXPECT_GT(diff.bad, 0);
}

}  // namespace
}  // namespace tf
