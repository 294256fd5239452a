// The encoder's CPU ops against float64 references evaluated at each op's rounding points, plus
// packing (sequences side by side give the same bytes as run alone) and kernel agreement.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/attention/attention.h"
#include "backend/attention/attention_query_key_prep.h"
#include "backend/conv/causal_conv1d_silu.h"
#include "backend/delta_rule/causal_conv1d_silu_delta_net_prep.h"
#include "backend/delta_rule/delta_net_prep.h"
#include "backend/embed/embedding.h"
#include "backend/delta_rule/gated_delta_rule.h"
#include "backend/linear/linear.h"
#include "backend/linear/linear_gated_product.h"
#include "backend/elementwise/residual_add.h"
#include "backend/norm/rms_norm_gated.h"
#include "backend/norm/rms_norm.h"
#include "backend/rope/rope.h"
#include "backend/rope/rope_tables.h"
#include "backend/elementwise/sigmoid_gate.h"
#include "backend/elementwise/silu_gated_product.h"
#include "backend/attention/split_query_gate.h"
#include "backend/variants.h"
#include "check/compare.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/error.h"
#include "support/error_message.h"

using namespace tf;

namespace {

using tf::check::random_bf16;
Tensor random_f32(Shape s, uint32_t seed, float lo, float hi) {
  Tensor t = empty(DType::F32, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ud(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = ud(rng);
  return t;
}
float at(const Tensor& t, int64_t i) {
  return t.dtype == DType::F32 ? t.ptr<float>()[i] : float_from_bf16_bits(t.ptr<uint16_t>()[i]);
}
double ulp_bf16(double v) {
  int e;
  std::frexp(std::max(std::fabs(v), 1e-30), &e);
  return std::ldexp(1.0, e - 8);
}
using check::same_bytes;
double silu(double x) { return x / (1 + std::exp(-x)); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double rb(double x) { return round_bf16(static_cast<float>(x)); }


}  // namespace

TEST(Linear, MatchesFloat64WithinOneRoundingAndKernelsAgree) {
  for (int64_t K : {5, 32, 77, 300}) {
    for (int64_t n : {1, 7, 13}) {
      for (int64_t N : {1, 5, 9}) {
        Tensor x = random_bf16({n, K}, 1 + K + n, 1.0f), w = random_bf16({N, K}, 7 + N, 0.1f);
        Tensor y = empty(DType::BF16, {n, N});
        variants::Override widest(Variant::cpu_linear, "auto");
        linear(x, w, y);
        for (int64_t t = 0; t < n; ++t)
          for (int64_t o = 0; o < N; ++o) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; ++k) {
              ref += double(at(x, t * K + k)) * at(w, o * K + k);
              mag += std::fabs(double(at(x, t * K + k)) * at(w, o * K + k));
            }
            double got = at(y, t * N + o);
            EXPECT_LE(std::fabs(got - ref), ulp_bf16(ref) / 2 + 2 * K * std::ldexp(mag, -24))
                << "K=" << K << " n=" << n << " N=" << N;
          }
        for (const char* k : {"scalar", "avx2", "avx512"}) {
          variants::Override kernel(Variant::cpu_linear, k);
          Tensor y2 = empty(DType::BF16, {n, N});
          linear(x, w, y2);
          EXPECT_TRUE(same_bytes(y, y2)) << k << " K=" << K;
        }
      }
    }
  }
}

TEST(Linear, KShareSumsMatchFloat64AndRoundToLinearsBytes) {
  for (int64_t K : {64, 96, 300}) {
    const int64_t n = 5, N = 7;
    Tensor x = random_bf16({n, K}, 21 + K, 1.0f), w = random_bf16({N, K}, 22 + K, 0.1f);
    Tensor y = empty(DType::BF16, {n, N});
    linear(x, w, y);
    for (int64_t P : {int64_t(1), int64_t(2), K % 3 == 0 ? int64_t(3) : int64_t(4)}) {
      if (K % P) continue;
      Tensor s = empty(DType::F32, {P, n, N});
      linear(x, w, s);
      const int64_t range = K / P;
      for (int64_t p = 0; p < P; ++p)
        for (int64_t t = 0; t < n; ++t)
          for (int64_t o = 0; o < N; ++o) {
            double ref = 0, mag = 0;
            for (int64_t k = p * range; k < (p + 1) * range; ++k) {
              ref += double(at(x, t * K + k)) * at(w, o * K + k);
              mag += std::fabs(double(at(x, t * K + k)) * at(w, o * K + k));
            }
            EXPECT_LE(std::fabs(s.ptr<float>()[(p * n + t) * N + o] - ref), 2 * range * std::ldexp(mag, -24))
                << "K=" << K << " P=" << P;
          }
      if (P == 1) {
        for (int64_t i = 0; i < n * N; ++i)
          ASSERT_EQ(round_bf16(s.ptr<float>()[i]), at(y, i)) << "one share rounds to linear's bytes, K=" << K << " at " << i;
      }
      // the residual adds finish the product: the same bytes as adding linear's rows when P is 1
      Tensor h = random_bf16({n, N}, 23, 2.0f), h1 = empty(DType::BF16, {n, N}), h2 = empty(DType::BF16, {n, N});
      copy_into(h1, h);
      copy_into(h2, h);
      residual_add(h1, s);
      Tensor wn = random_bf16({N}, 24, 0.3f), y1 = empty(DType::BF16, {n, N}), y2 = empty(DType::BF16, {n, N});
      residual_add_rms_norm(h2, s, wn, {NormWeight::one_plus, 1e-6f}, y2);
      EXPECT_TRUE(same_bytes(h1, h2)) << "both adds take the shares alike, K=" << K << " P=" << P;
      for (int64_t i = 0; i < n * N; ++i) {
        float sum = s.ptr<float>()[i];
        for (int64_t p = 1; p < P; ++p) sum = sum + s.ptr<float>()[p * n * N + i];
        const float want = round_bf16(at(h, i) + round_bf16(sum));
        ASSERT_EQ(at(h1, i), want) << "h = bf16(h + bf16(shares added in order)) at " << i << ", P=" << P;
      }
      rms_norm(h1, wn, {NormWeight::one_plus, 1e-6f}, y1);
      EXPECT_TRUE(same_bytes(y1, y2)) << "K=" << K << " P=" << P;
    }
  }
}

TEST(Linear, KShareSumsRefuseABadShareCountByName) {
  Tensor x = random_bf16({3, 64}, 1), w = random_bf16({4, 64}, 2);
  Tensor three = empty(DType::F32, {3, 3, 4}), flat = empty(DType::F32, {3, 4});
  EXPECT_THROW(linear(x, w, three), Error);  // 3 does not divide 64
  EXPECT_THROW(linear(x, w, flat), Error);
  EXPECT_EQ(linear_k_shares(Device::CPU, 3, 64, 4), 0);
  Tensor h = random_bf16({3, 4}, 3), wrong = empty(DType::F32, {2, 4, 4});
  const std::string d_msg = tf::test_support::error_message([&] { residual_add(h, wrong); });
  EXPECT_NE(d_msg.find("residual_add: d is"), std::string::npos) << d_msg;
}

TEST(Linear, RefusesMismatchedShapes) {
  Tensor x = random_bf16({3, 8}, 1), w = random_bf16({4, 9}, 2), y = empty(DType::BF16, {3, 4});
  EXPECT_THROW(linear(x, w, y), Error);
}

TEST(Linear, SharedInputGivesEachWeightsOwnBytes) {
  Tensor x = random_bf16({5, 64}, 11), w1 = random_bf16({7, 64}, 12), w2 = random_bf16({3, 64}, 13);
  Tensor y1 = empty(DType::BF16, {5, 7}), y2 = empty(DType::BF16, {5, 3});
  Tensor r1 = empty(DType::BF16, {5, 7}), r2 = empty(DType::BF16, {5, 3});
  linear_shared_input(x, {{&w1, &y1}, {&w2, &y2}});
  linear(x, w1, r1);
  linear(x, w2, r2);
  EXPECT_EQ(0, std::memcmp(y1.data, r1.data, y1.nbytes()));
  EXPECT_EQ(0, std::memcmp(y2.data, r2.data, y2.nbytes()));
}

TEST(Linear, SharedInputRefusesAMismatchedPartByName) {
  Tensor x = random_bf16({5, 64}, 11), w1 = random_bf16({7, 64}, 12), bad = random_bf16({3, 63}, 13);
  Tensor y1 = empty(DType::BF16, {5, 7}), y2 = empty(DType::BF16, {5, 3}), wrong_y = empty(DType::BF16, {5, 4});
  const std::string w_msg = tf::test_support::error_message([&] { linear_shared_input(x, {{&w1, &y1}, {&bad, &y2}}); });
  EXPECT_NE(w_msg.find("linear_shared_input: w is"), std::string::npos) << w_msg;
  const std::string y_msg = tf::test_support::error_message([&] { linear_shared_input(x, {{&w1, &wrong_y}}); });
  EXPECT_NE(y_msg.find("linear_shared_input: y is"), std::string::npos) << y_msg;
  EXPECT_THROW(linear_shared_input(x, {}), Error);
}

TEST(RmsNormZeroCentred, MatchesFloat64AndFusedAddIsTheSame) {
  int64_t rows = 9, d = 70;
  Tensor h = random_bf16({rows, d}, 3, 2.0f), dlt = random_bf16({rows, d}, 4), w = random_bf16({d}, 5, 0.3f);
  Tensor y = empty(DType::BF16, {rows, d});
  Tensor h2 = empty(DType::BF16, {rows, d});
  copy_into(h2, h);
  residual_add(h2, dlt);
  rms_norm(h2, w, {NormWeight::one_plus, 1e-6f}, y);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += double(at(h2, r * d + i)) * at(h2, r * d + i);
    double inv = 1 / std::sqrt(ss / d + 1e-6);
    for (int64_t i = 0; i < d; ++i) {
      double ref = at(h2, r * d + i) * inv * (1 + double(at(w, i)));
      EXPECT_LE(std::fabs(at(y, r * d + i) - ref), ulp_bf16(ref) * 0.5 + std::fabs(ref) * 1e-6);
    }
  }
  Tensor y2 = empty(DType::BF16, {rows, d});
  residual_add_rms_norm(h, dlt, w, {NormWeight::one_plus, 1e-6f}, y2);
  EXPECT_TRUE(same_bytes(h, h2));
  EXPECT_TRUE(same_bytes(y, y2));
  Tensor wf = empty(DType::F32, {d});
  for (int64_t i = 0; i < d; ++i) wf.ptr<float>()[i] = at(w, i);
  Tensor y3 = empty(DType::BF16, {rows, d});
  rms_norm(h2, wf, {NormWeight::one_plus, 1e-6f}, y3);
  EXPECT_TRUE(same_bytes(y, y3));  // an F32 copy of bf16 weights changes nothing
}

TEST(ElementWise, GatedProductsRoundTwice) {
  Tensor g = random_bf16({5, 33}, 8, 3.0f), u = random_bf16({5, 33}, 9, 3.0f);
  Tensor y = empty(DType::BF16, {5, 33}), z = empty(DType::BF16, {5, 33});
  silu_gated_product(g, u, y);
  sigmoid_gate(u, g, z);
  for (int64_t i = 0; i < g.numel(); ++i) {
    double ref = rb(silu(at(g, i))) * at(u, i);
    EXPECT_LE(std::fabs(at(y, i) - ref), ulp_bf16(ref) * 0.5 + 1e-30);
    double ref2 = at(u, i) * rb(sigmoid(at(g, i)));
    EXPECT_LE(std::fabs(at(z, i) - ref2), ulp_bf16(ref2) * 0.5 + 1e-30);
  }
}

// The MLP's products and gated product in one op give the three steps' bytes; its errors name it.
TEST(Linear, SiluGatedProductOfTwoProductsGivesTheStepsBytes) {
  Tensor x = random_bf16({7, 96}, 41), wg = random_bf16({33, 96}, 42, 0.3f), wu = random_bf16({33, 96}, 43, 0.3f);
  Tensor y = empty(DType::BF16, {7, 33}), gate = empty(DType::BF16, {7, 33}), up = empty(DType::BF16, {7, 33}),
         y2 = empty(DType::BF16, {7, 33});
  linear_gated_product(x, wg, wu, GatedActivation::silu, y);
  linear(x, wg, gate);
  linear(x, wu, up);
  silu_gated_product(gate, up, y2);
  EXPECT_TRUE(same_bytes(y, y2));
  Tensor bad_up = random_bf16({32, 96}, 44), bad_y = empty(DType::BF16, {7, 32});
  const std::string up_msg = tf::test_support::error_message([&] { linear_gated_product(x, wg, bad_up, GatedActivation::silu, y); });
  const std::string y_msg = tf::test_support::error_message([&] { linear_gated_product(x, wg, wu, GatedActivation::silu, bad_y); });
  EXPECT_NE(up_msg.find("linear_gated_product: w_up is"), std::string::npos) << up_msg;
  EXPECT_NE(y_msg.find("linear_gated_product: y is"), std::string::npos) << y_msg;
}

// Gated attention's query and key preparation gives the bytes of its four steps; bad geometry is
// refused by the op's name.
TEST(Attention, QueryKeyPrepGivesTheStepsBytes) {
  const int64_t T = 9, Hq = 4, Hkv = 2, d = 16, half = 4;
  const SeqOffsets seqs = {0, 5, 9};
  RopeTables rt = make_rope_tables(8, 2 * half, 1e7);
  Tensor qg = random_bf16({T, Hq * 2 * d}, 91), kraw = random_bf16({T, Hkv * d}, 92), qn = random_bf16({d}, 93, 0.3f),
         kn = random_bf16({d}, 94, 0.3f);
  Tensor q = empty(DType::BF16, {T, Hq, d}), k = empty(DType::BF16, {T, Hkv, d}), gate = empty(DType::BF16, {T, Hq, d});
  attention_query_key_prep(qg, kraw, qn, kn, 1e-6f, rt.cos, rt.sin, seqs, q, k, gate);
  Tensor query = empty(DType::BF16, {T, Hq, d}), gate2 = empty(DType::BF16, {T, Hq, d}), q2 = empty(DType::BF16, {T, Hq, d}),
         k2 = empty(DType::BF16, {T, Hkv, d});
  split_query_gate(qg, query, gate2);
  Tensor q_rows = q2.reshaped({T * Hq, d}), k_rows = k2.reshaped({T * Hkv, d});
  rms_norm(query.reshaped({T * Hq, d}), qn, {NormWeight::one_plus, 1e-6f}, q_rows);
  rms_norm(kraw.reshaped({T * Hkv, d}), kn, {NormWeight::one_plus, 1e-6f}, k_rows);
  rope(q2, {rt.cos, rt.sin}, RopePositions::sequential(seqs), q2);
  rope(k2, {rt.cos, rt.sin}, RopePositions::sequential(seqs), k2);
  EXPECT_TRUE(same_bytes(q, q2));
  EXPECT_TRUE(same_bytes(k, k2));
  EXPECT_TRUE(same_bytes(gate, gate2));
  Tensor short_tables = make_rope_tables(4, 2 * half, 1e7).cos, bad_kraw = random_bf16({T, Hkv * d + 1}, 95);
  const std::string kraw_msg = tf::test_support::error_message([&] { attention_query_key_prep(qg, bad_kraw, qn, kn, 1e-6f, rt.cos, rt.sin, seqs, q, k, gate); });
  const std::string pos_msg = tf::test_support::error_message([&] { attention_query_key_prep(qg, kraw, qn, kn, 1e-6f, short_tables, short_tables, seqs, q, k, gate); });
  EXPECT_NE(kraw_msg.find("attention_query_key_prep: kraw is"), std::string::npos) << kraw_msg;
  EXPECT_NE(pos_msg.find("attention_query_key_prep: a sequence of 5 tokens"), std::string::npos) << pos_msg;
  const std::string alias_msg = tf::test_support::error_message([&] { attention_query_key_prep(qg, kraw, qn, kn, 1e-6f, rt.cos, rt.sin, seqs, q, k, q); });
  EXPECT_NE(alias_msg.find("attention_query_key_prep: an output aliases"), std::string::npos) << alias_msg;
}

TEST(ElementWise, EmbeddingAndSplit) {
  Tensor table = random_bf16({10, 6}, 10), ids = empty(DType::I32, {3}), out = empty(DType::BF16, {3, 6});
  int32_t v[3] = {9, 0, 4};
  std::memcpy(ids.data, v, sizeof v);
  embedding(table, ids, out);
  for (int t = 0; t < 3; ++t) EXPECT_EQ(0, std::memcmp(out.ptr<uint16_t>() + t * 6, table.ptr<uint16_t>() + v[t] * 6, 12));
  ids.ptr<int32_t>()[1] = 10;
  EXPECT_THROW(embedding(table, ids, out), Error);
  // ids the caller checked: no error, a bad id's row is zeros, the others the table's rows
  for (int t = 0; t < 3; ++t) std::memset(out.ptr<uint16_t>() + t * 6, 0xff, 12);
  embedding(table, ids, out, IdCheck::by_caller);
  for (int t = 0; t < 3; ++t)
    if (t == 1)
      for (int i = 0; i < 6; ++i) EXPECT_EQ(out.ptr<uint16_t>()[t * 6 + i], 0) << i;
    else
      EXPECT_EQ(0, std::memcmp(out.ptr<uint16_t>() + t * 6, table.ptr<uint16_t>() + v[t] * 6, 12)) << t;

  Tensor qg = random_bf16({2, 3 * 2 * 4}, 11), q = empty(DType::BF16, {2, 3, 4}), gt = empty(DType::BF16, {2, 3, 4});
  split_query_gate(qg, q, gt);
  for (int t = 0; t < 2; ++t)
    for (int h = 0; h < 3; ++h)
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(q.ptr<uint16_t>()[(t * 3 + h) * 4 + i], qg.ptr<uint16_t>()[t * 24 + h * 8 + i]);
        EXPECT_EQ(gt.ptr<uint16_t>()[(t * 3 + h) * 4 + i], qg.ptr<uint16_t>()[t * 24 + h * 8 + 4 + i]);
      }
}

TEST(CausalConv, MatchesFloat64AndSequencesStayApart) {
  int64_t T = 11, C = 7, K = 4;
  Tensor x = random_bf16({T, C}, 12), w = random_bf16({C, 1, K}, 13, 0.5f), y = empty(DType::BF16, {T, C});
  SeqOffsets offs{0, 4, 4, 11};
  causal_conv1d_silu(x, w, offs, y);
  for (size_t s = 0; s + 1 < offs.size(); ++s)
    for (int64_t t = offs[s]; t < offs[s + 1]; ++t)
      for (int64_t c = 0; c < C; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < K; ++j) {
          int64_t src = t - (K - 1) + j;
          if (src >= offs[s]) acc += double(at(w, c * K + j)) * at(x, src * C + c);
        }
        double conv = rb(acc);
        double ref = silu(conv);
        EXPECT_LE(std::fabs(at(y, t * C + c) - ref), ulp_bf16(ref) * 0.5 + ulp_bf16(conv) * 0.5 * 1.2 + 1e-30);
      }
  // the second sequence alone gives the same rows
  Tensor x2 = x.rows(4, 11), y2 = empty(DType::BF16, {7, C});
  causal_conv1d_silu(x2, w, single_sequence(7), y2);
  EXPECT_TRUE(same_bytes(y2, y.rows(4, 11)));
  EXPECT_THROW(causal_conv1d_silu(x, w, SeqOffsets{0, 5, 3, 11}, y), Error);
  EXPECT_THROW(causal_conv1d_silu(x, w, SeqOffsets{0, 10}, y), Error);
}

// The fused inputs op is the two steps' composition: the same bytes, and its own errors by name.
TEST(DeltaNet, ConvThenPrepInOneOpGivesTheTwoStepsBytes) {
  const int64_t T = 11, Hk = 2, dk = 8, Hv = 4, dv = 6, C = 2 * Hk * dk + Hv * dv;
  const SeqOffsets offs{0, 4, 4, 11};
  Tensor x = random_bf16({T, C}, 21), w = random_bf16({C, 1, 4}, 22, 0.5f), b = random_bf16({T, Hv}, 23, 2.0f),
         a = random_bf16({T, Hv}, 24, 2.0f), A_log = random_f32({Hv}, 25, -1.0f, 2.0f), dt = random_bf16({Hv}, 26);
  auto outputs = [&] {
    return std::vector<Tensor>{empty(DType::F32, {T, Hk, dk}), empty(DType::F32, {T, Hk, dk}), empty(DType::F32, {T, Hv, dv}),
                               empty(DType::F32, {T, Hv}), empty(DType::F32, {T, Hv})};
  };
  std::vector<Tensor> one = outputs(), two = outputs();
  causal_conv1d_silu_delta_net_prep(x, w, offs, b, a, A_log, dt, one[0], one[1], one[2], one[3], one[4]);
  Tensor conv = empty(DType::BF16, {T, C});
  causal_conv1d_silu(x, w, offs, conv);
  delta_net_prep(conv, b, a, A_log, dt, two[0], two[1], two[2], two[3], two[4]);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(same_bytes(one[i], two[i])) << "output " << i;
  auto run = [&](const Tensor& xx, const Tensor& ww, const SeqOffsets& o) {
    return tf::test_support::error_message([&] { causal_conv1d_silu_delta_net_prep(xx, ww, o, b, a, A_log, dt, one[0], one[1], one[2], one[3], one[4]); });
  };
  Tensor w3 = random_bf16({C, 1, 3}, 27), bad_w = random_bf16({C - 1, 1, 4}, 27);
  const std::string w_msg = run(x, bad_w, offs), x_msg = run(x.rows(0, 10), w, offs), o_msg = run(x, w, {0, 10});
  EXPECT_NE(w_msg.find("causal_conv1d_silu_delta_net_prep: w is"), std::string::npos) << w_msg;
  EXPECT_NE(x_msg.find("causal_conv1d_silu_delta_net_prep: x is"), std::string::npos) << x_msg;
  EXPECT_NE(o_msg.find("causal_conv1d_silu_delta_net_prep"), std::string::npos) << o_msg;
  causal_conv1d_silu_delta_net_prep(x, w3, offs, b, a, A_log, dt, one[0], one[1], one[2], one[3], one[4]);  // any K
}

TEST(DeltaNet, PrepAndRecurrenceMatchFloat64) {
  int64_t T = 9, Hk = 2, dk = 8, Hv = 4, dv = 6;
  Tensor mixed = random_bf16({T, 2 * Hk * dk + Hv * dv}, 14), b = random_bf16({T, Hv}, 15, 2.0f),
         a = random_bf16({T, Hv}, 16, 2.0f);
  Tensor A_log = random_f32({Hv}, 17, -1.0f, 2.0f), dt = random_bf16({Hv}, 18);
  Tensor q = empty(DType::F32, {T, Hk, dk}), k = empty(DType::F32, {T, Hk, dk}), v = empty(DType::F32, {T, Hv, dv}),
         beta = empty(DType::F32, {T, Hv}), g = empty(DType::F32, {T, Hv});
  delta_net_prep(mixed, b, a, A_log, dt, q, k, v, beta, g);
  int64_t W = mixed.dim(1);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < Hk; ++h) {
      double sq = 0, sk = 0;
      for (int64_t i = 0; i < dk; ++i) {
        sq += std::pow(double(at(mixed, t * W + h * dk + i)), 2);
        sk += std::pow(double(at(mixed, t * W + Hk * dk + h * dk + i)), 2);
      }
      for (int64_t i = 0; i < dk; ++i) {
        double rq = at(mixed, t * W + h * dk + i) / std::sqrt(sq + 1e-6) / std::sqrt(double(dk));
        double rk = at(mixed, t * W + Hk * dk + h * dk + i) / std::sqrt(sk + 1e-6);
        EXPECT_NEAR(at(q, (t * Hk + h) * dk + i), rq, 1e-6);
        EXPECT_NEAR(at(k, (t * Hk + h) * dk + i), rk, 1e-6);
      }
    }
    for (int64_t h = 0; h < Hv; ++h) {
      EXPECT_EQ(at(beta, t * Hv + h), rb(sigmoid(at(b, t * Hv + h))));
      double x = double(at(a, t * Hv + h)) + at(dt, h);
      double ref = -std::exp(double(at(A_log, h))) * std::log1p(std::exp(x));
      EXPECT_NEAR(at(g, t * Hv + h), ref, 1e-5 * std::fabs(ref) + 1e-7);
    }
  }
  SeqOffsets offs{0, 5, 9};
  Tensor o = empty(DType::BF16, {T, Hv, dv});
  gated_delta_rule(q, k, v, beta, g, offs, o);
  for (size_t s = 0; s + 1 < offs.size(); ++s)
    for (int64_t h = 0; h < Hv; ++h) {
      std::vector<double> S(dk * dv, 0.0);
      int64_t hk = h / (Hv / Hk);
      for (int64_t t = offs[s]; t < offs[s + 1]; ++t) {
        double dec = std::exp(double(at(g, t * Hv + h))), bt = at(beta, t * Hv + h);
        for (auto& e : S) e *= dec;
        for (int64_t j = 0; j < dv; ++j) {
          double kv = 0;
          for (int64_t i = 0; i < dk; ++i) kv += S[i * dv + j] * at(k, (t * Hk + hk) * dk + i);
          double d = (at(v, (t * Hv + h) * dv + j) - kv) * bt;
          for (int64_t i = 0; i < dk; ++i) S[i * dv + j] += at(k, (t * Hk + hk) * dk + i) * d;
        }
        for (int64_t j = 0; j < dv; ++j) {
          double out = 0, mag = 0;
          for (int64_t i = 0; i < dk; ++i) {
            out += S[i * dv + j] * at(q, (t * Hk + hk) * dk + i);
            mag += std::fabs(S[i * dv + j] * at(q, (t * Hk + hk) * dk + i));
          }
          EXPECT_LE(std::fabs(at(o, (t * Hv + h) * dv + j) - out), ulp_bf16(out) * 0.5 + mag * 1e-5)
              << "t=" << t << " h=" << h << " j=" << j;
        }
      }
    }
  Tensor o2 = empty(DType::BF16, {4, Hv, dv});
  gated_delta_rule(q.rows(5, 9), k.rows(5, 9), v.rows(5, 9), beta.rows(5, 9), g.rows(5, 9), single_sequence(4), o2);
  EXPECT_TRUE(same_bytes(o2, o.rows(5, 9)));
}

TEST(RmsNormGated, MatchesFloat64ForBothWeightDtypes) {
  int64_t rows = 6, d = 16;
  Tensor x = random_bf16({rows, d}, 19), z = random_bf16({rows, d}, 20, 2.0f);
  Tensor wf = random_f32({d}, 21, 0.5f, 1.5f), wb = empty(DType::BF16, {d});
  for (int64_t i = 0; i < d; ++i) wb.ptr<uint16_t>()[i] = bf16_bits_from_float(wf.ptr<float>()[i]);
  for (const Tensor* w : {&wf, &wb}) {
    Tensor y = empty(DType::BF16, {rows, d});
    rms_norm_gated(x, z, *w, 1e-6f, y);
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < d; ++i) ss += std::pow(double(at(x, r * d + i)), 2);
      for (int64_t i = 0; i < d; ++i) {
        double n = rb(at(x, r * d + i) / std::sqrt(ss / d + 1e-6));
        double t = at(*w, i) * n;
        if (w->dtype == DType::BF16) t = rb(t);
        double ref = t * silu(at(z, r * d + i));
        EXPECT_LE(std::fabs(at(y, r * d + i) - ref), ulp_bf16(ref) * 0.5 + std::fabs(ref) * 1e-5);
      }
    }
  }
}

TEST(Rope, RotatesTheFirstDimsWithPositionsPerSequence) {
  int64_t T = 7, H = 2, hd = 10, rot = 6;
  RopeTables tab = make_rope_tables(8, rot, 10000.0);
  Tensor x = random_bf16({T, H, hd}, 22), y = empty(DType::BF16, {T, H, hd});
  SeqOffsets offs{0, 3, 7};
  rope(x, {tab.cos, tab.sin}, RopePositions::sequential(offs), y);
  for (int64_t t = 0; t < T; ++t) {
    int64_t pos = t < 3 ? t : t - 3;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < hd; ++i) {
        const int64_t base = (t * H + h) * hd;
        if (i >= rot) {
          EXPECT_EQ(at(y, base + i), at(x, base + i));
          continue;
        }
        int64_t j = i % (rot / 2);
        double ang = pos * std::pow(10000.0, -2.0 * j / rot);
        double c = rb(std::cos(ang)), s = rb(std::sin(ang));
        double r = i < rot / 2 ? -at(x, base + i + rot / 2) : at(x, base + i - rot / 2);
        double ref = rb(at(x, base + i) * c) + rb(r * s);
        EXPECT_LE(std::fabs(at(y, base + i) - ref), ulp_bf16(ref) * 0.5 + 1e-6) << t << " " << i;
      }
  }
  rope(x, {tab.cos, tab.sin}, RopePositions::sequential(offs), x);  // in place
  EXPECT_TRUE(same_bytes(x, y));
  RopeTables short_tab = make_rope_tables(3, rot, 10000.0);
  EXPECT_THROW(rope(x, {short_tab.cos, short_tab.sin}, RopePositions::sequential(single_sequence(7)), y), Error);
}

TEST(Attention, EagerRoundingAndGroupedHeads) {
  int64_t T = 9, Hq = 4, Hkv = 2, d = 8;
  Tensor q = random_bf16({T, Hq, d}, 23, 2.0f), k = random_bf16({T, Hkv, d}, 24, 2.0f), v = random_bf16({T, Hkv, d}, 25);
  Tensor o = empty(DType::BF16, {T, Hq, d});
  SeqOffsets offs{0, 2, 9};
  float scale = 0.35355339f;
  attention(q, k, v, {.scale = scale, .sequences = offs}, o);
  for (size_t s = 0; s + 1 < offs.size(); ++s)
    for (int64_t t = offs[s]; t < offs[s + 1]; ++t)
      for (int64_t h = 0; h < Hq; ++h) {
        int64_t hk = h / 2;
        std::vector<double> sc;
        double m = -1e300;
        for (int64_t j = offs[s]; j <= t; ++j) {
          double dot = 0;
          for (int64_t i = 0; i < d; ++i) dot += double(at(q, (t * Hq + h) * d + i)) * at(k, (j * Hkv + hk) * d + i);
          sc.push_back(rb(rb(dot) * scale));
          m = std::max(m, sc.back());
        }
        double sum = 0;
        for (auto& e : sc) sum += (e = std::exp(e - m));
        for (int64_t i = 0; i < d; ++i) {
          double out = 0, mag = 0;
          for (size_t j = 0; j < sc.size(); ++j) {
            double p = rb(sc[j] / sum);
            out += p * at(v, ((offs[s] + j) * Hkv + hk) * d + i);
            mag += std::fabs(p * at(v, ((offs[s] + j) * Hkv + hk) * d + i));
          }
          EXPECT_LE(std::fabs(at(o, (t * Hq + h) * d + i) - out), ulp_bf16(out) * 0.5 + mag * 0.01) << t << " " << h;
        }
      }
  Tensor o2 = empty(DType::BF16, {7, Hq, d});
  attention(q.rows(2, 9), k.rows(2, 9), v.rows(2, 9), {.scale = scale, .sequences = single_sequence(7)}, o2);
  EXPECT_TRUE(same_bytes(o2, o.rows(2, 9)));
}
