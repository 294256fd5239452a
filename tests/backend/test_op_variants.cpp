// The generic ops' variants (rms_norm's weight forms, attention's mask, rope's positions, linear's
// epilogues) against their definitions: each variant gives the bytes of the steps it is made of.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/attention/attention.h"
#include "backend/elementwise/residual_add.h"
#include "backend/linear/linear.h"
#include "backend/norm/rms_norm.h"
#include "backend/norm/rms_norm_modulate.h"
#include "backend/rope/rope.h"
#include "check/compare.h"
#include "check/random_tensor.h"
#include "core/bf16.h"
#include "core/error.h"
#include "support/error_message.h"

using namespace tf;
using check::same_bytes;

namespace {

using tf::check::random_bf16;
float at(const Tensor& t, int64_t i) { return float_from_bf16_bits(t.ptr<uint16_t>()[i]); }
uint16_t bits(float f) { return bf16_bits_from_float(f); }
Tensor copy_of(const Tensor& t) {
  Tensor c = empty(t.dtype, t.shape);
  copy_into(c, t);
  return c;
}


}  // namespace

TEST(RmsNormVariants, PlainWeightRoundsTheNormalisedRowThenTheProduct) {
  const int64_t rows = 5, d = 48;
  Tensor x = random_bf16({rows, d}, 1), w = random_bf16({d}, 2, 0.5f), y = empty(DType::BF16, {rows, d});
  rms_norm(x, w, {NormWeight::plain, 1e-6f}, y);
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (int64_t i = 0; i < d; ++i) sum += at(x, r * d + i) * at(x, r * d + i);
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(d) + 1e-6f);
    for (int64_t i = 0; i < d; ++i) {
      const float n = round_bf16(at(x, r * d + i) * inv);
      ASSERT_EQ(y.ptr<uint16_t>()[r * d + i], bits(n * at(w, i))) << "row " << r << " dim " << i;
    }
  }
  // the one_plus form of w - 1 rounds once, so it is another result
  Tensor y1 = empty(DType::BF16, {rows, d});
  rms_norm(x, w, {NormWeight::one_plus, 1e-6f}, y1);
  EXPECT_FALSE(same_bytes(y, y1));
}

TEST(RmsNormVariants, PlainResidualFormIsTheAddThenTheNorm) {
  Tensor h = random_bf16({7, 32}, 3), d = random_bf16({7, 32}, 4), w = random_bf16({32}, 5);
  Tensor h2 = copy_of(h), y = empty(DType::BF16, {7, 32}), y2 = empty(DType::BF16, {7, 32});
  residual_add_rms_norm(h, d, w, {NormWeight::plain, 1e-6f}, y);
  residual_add(h2, d);
  rms_norm(h2, w, {NormWeight::plain, 1e-6f}, y2);
  EXPECT_TRUE(same_bytes(h, h2));
  EXPECT_TRUE(same_bytes(y, y2));
}

TEST(RmsNormVariants, PlainRefusesAnF32WeightByName) {
  Tensor x = random_bf16({2, 8}, 6), y = empty(DType::BF16, {2, 8}), w = empty(DType::F32, {8});
  EXPECT_NE(tf::test_support::error_message([&] { rms_norm(x, w, {NormWeight::plain, 1e-6f}, y); }).find("w (plain)"), std::string::npos);
}

TEST(AttentionVariants, BidirectionalRowsSeeTheirWholeSequenceOnly) {
  // Two packed sequences (5 and 7 tokens), 4 query heads on 2 kv heads.
  const int64_t T = 12, Hq = 4, Hkv = 2, d = 16;
  const SeqOffsets seqs{0, 5, 12};
  Tensor q = random_bf16({T, Hq, d}, 7), k = random_bf16({T, Hkv, d}, 8), v = random_bf16({T, Hkv, d}, 9);
  Tensor none = empty(DType::BF16, {T, Hq, d}), causal = empty(DType::BF16, {T, Hq, d});
  attention(q, k, v, {.scale = 0.25f, .mask = AttentionMask::none, .sequences = seqs}, none);
  attention(q, k, v, {.scale = 0.25f, .mask = AttentionMask::causal, .sequences = seqs}, causal);
  // a sequence's last row sees every key of it under both masks; its first row does not
  for (int64_t last : {4, 11}) EXPECT_TRUE(same_bytes(none.rows(last, last + 1), causal.rows(last, last + 1)));
  for (int64_t first : {0, 5}) EXPECT_FALSE(same_bytes(none.rows(first, first + 1), causal.rows(first, first + 1)));
  // each packed sequence gets the bytes it gets alone
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 5}, {5, 12}}) {
    Tensor alone = empty(DType::BF16, {e - b, Hq, d});
    attention(q.rows(b, e), k.rows(b, e), v.rows(b, e), {.scale = 0.25f, .mask = AttentionMask::none}, alone);
    EXPECT_TRUE(same_bytes(alone, none.rows(b, e))) << "sequence from " << b;
  }
}

TEST(AttentionVariants, ChannelsLayoutRefusesMasksAndPackedSequences) {
  Tensor q = empty(DType::F32, {8, 6}), o = empty(DType::F32, {8, 6});
  EXPECT_NE(tf::test_support::error_message([&] { attention(q, q, q, {.layout = AttentionLayout::channels}, o); }).find("causal"),
            std::string::npos);
  EXPECT_NE(tf::test_support::error_message([&] {
              attention(q, q, q, {.mask = AttentionMask::none, .layout = AttentionLayout::channels, .sequences = {0, 2, 6}},
                        o);
            }).find("one sequence"),
            std::string::npos);
}

TEST(RopeVariants, PerTokenRowsAreOneSequenceOverAllTokens) {
  const int64_t T = 9, H = 2, hd = 16;
  RopeTables tables = make_rope_tables(T, 12, 1e4);
  Tensor x = random_bf16({T, H, hd}, 10), a = empty(DType::BF16, {T, H, hd}), b = empty(DType::BF16, {T, H, hd});
  rope(x, tables, RopePositions::per_token(T), a);
  rope(x, tables, RopePositions::sequential(single_sequence(T)), b);
  EXPECT_TRUE(same_bytes(a, b));
  // packed sequences restart their positions: the second sequence's first token is unrotated (position 0)
  rope(x, tables, RopePositions::sequential({0, 4, 9}), b);
  EXPECT_TRUE(same_bytes(a.rows(0, 4), b.rows(0, 4)));
  EXPECT_TRUE(same_bytes(b.rows(4, 5), x.rows(4, 5)));
  EXPECT_FALSE(same_bytes(a.rows(4, 5), b.rows(4, 5)));
}

TEST(LinearEpilogue, BiasJoinsTheSumBeforeItsOneRounding) {
  const int64_t n = 7, K = 70, N = 11;
  Tensor x = random_bf16({n, K}, 11), w = random_bf16({N, K}, 12), b = random_bf16({N}, 13);
  Tensor y = empty(DType::BF16, {n, N}), sums = empty(DType::F32, {1, n, N});
  linear(x, w, y, {.bias = &b});
  linear(x, w, sums);  // the unrounded fp32 sums, in linear's order
  for (int64_t t = 0; t < n; ++t)
    for (int64_t o = 0; o < N; ++o)
      ASSERT_EQ(y.ptr<uint16_t>()[t * N + o], bits(sums.ptr<float>()[t * N + o] + at(b, o))) << t << ", " << o;
  Tensor fb = empty(DType::F32, {N});  // an F32 bias enters as stored
  for (int64_t o = 0; o < N; ++o) fb.ptr<float>()[o] = at(b, o) + 1e-3f;
  Tensor yf = empty(DType::BF16, {n, N});
  linear(x, w, yf, {.bias = &fb});
  EXPECT_EQ(yf.ptr<uint16_t>()[0], bits(sums.ptr<float>()[0] + fb.ptr<float>()[0]));
}

TEST(LinearEpilogue, ResidualFormsGiveTheStepsBytes) {
  const int64_t n = 6, K = 64, N = 32;
  Tensor x = random_bf16({n, K}, 14), w = random_bf16({N, K}, 15), b = random_bf16({N}, 16);
  Tensor gate = random_bf16({N}, 17), nw = random_bf16({N}, 18), h0 = random_bf16({n, N}, 19);
  Tensor shift = random_bf16({N}, 24), scale = random_bf16({N}, 25, 0.5f);
  enum Norm { none, one_plus, modulated };
  for (bool with_bias : {false, true})
    for (bool with_gate : {false, true})
      for (Norm norm : {none, one_plus, modulated}) {
        SCOPED_TRACE(testing::Message() << "bias " << with_bias << " gate " << with_gate << " norm " << norm);
        const RmsNormOptions opts{norm == modulated ? NormWeight::plain : NormWeight::one_plus, 1e-6f};
        Tensor h = copy_of(h0), y = empty(DType::BF16, {n, N}), x1 = empty(DType::BF16, {n, N});
        linear(x, w, {.bias = with_bias ? &b : nullptr, .residual = &h, .gate = with_gate ? &gate : nullptr,
                      .norm_weight = norm != none ? &nw : nullptr, .norm = opts, .norm_out = norm != none ? &x1 : nullptr,
                      .shift = norm == modulated ? &shift : nullptr, .scale = norm == modulated ? &scale : nullptr});
        // the steps: the product (with its bias), the gated or plain add, the norm
        Tensor h2 = copy_of(h0), p = empty(DType::BF16, {n, N}), x2 = empty(DType::BF16, {n, N});
        linear(x, w, p, {.bias = with_bias ? &b : nullptr});
        for (int64_t i = 0; i < h2.numel(); ++i) {
          const float d = with_gate ? at(p, i) * at(gate, i % N) : at(p, i);  // the gated add rounds once
          h2.ptr<uint16_t>()[i] = bits(at(h2, i) + d);
        }
        EXPECT_TRUE(same_bytes(h, h2));
        if (norm == one_plus) rms_norm(h2, nw, opts, x2);
        if (norm == modulated) rms_norm_modulate(h2, nw, 1e-6f, shift, scale, x2);
        if (norm != none) {
          EXPECT_TRUE(same_bytes(x1, x2));
        }
      }
}

TEST(RmsNormVariants, GatedResidualModulatedFormIsTheGatedAddThenTheModulatedNorm) {
  const int64_t n = 5, d = 48;
  Tensor h0 = random_bf16({n, d}, 30, 2.0f), delta = random_bf16({n, d}, 31), gate = random_bf16({d}, 32);
  Tensor w = random_bf16({d}, 33), shift = random_bf16({d}, 34), scale = random_bf16({d}, 35, 0.5f);
  Tensor h = copy_of(h0), y = empty(DType::BF16, {n, d});
  residual_add_rms_norm_modulate(h, delta, gate, w, 1e-6f, shift, scale, y);
  Tensor h2 = copy_of(h0), y2 = empty(DType::BF16, {n, d});
  for (int64_t i = 0; i < h2.numel(); ++i) h2.ptr<uint16_t>()[i] = bits(at(h2, i) + at(delta, i) * at(gate, i % d));
  EXPECT_TRUE(same_bytes(h, h2));
  for (int64_t r = 0; r < n; ++r) {  // the modulated norm written out: fp32 steps, one rounding
    float ss = 0.0f;
    for (int64_t i = 0; i < d; ++i) ss += at(h2, r * d + i) * at(h2, r * d + i);
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + 1e-6f);
    for (int64_t i = 0; i < d; ++i) {
      const float v = ((at(h2, r * d + i) * inv) * at(w, i)) * (1.0f + at(scale, i)) + at(shift, i);
      ASSERT_EQ(y.ptr<uint16_t>()[r * d + i], bits(v)) << r << ", " << i;
    }
  }
  auto message = [&](auto f) { return tf::test_support::error_message(f); };
  EXPECT_NE(message([&] { residual_add_rms_norm_modulate(h, delta, gate, w, 1e-6f, shift, scale, h); }).find("must not alias"),
            std::string::npos);
  Tensor short_gate = random_bf16({d - 1}, 36);
  EXPECT_NE(message([&] { residual_add_rms_norm_modulate(h, delta, short_gate, w, 1e-6f, shift, scale, y); }).find("gate"),
            std::string::npos);
}

TEST(LinearEpilogue, RefusesAResidualWithAnOutputAndAHalfNorm) {
  Tensor x = random_bf16({2, 8}, 20), w = random_bf16({4, 8}, 21), h = random_bf16({2, 4}, 22);
  Tensor y = empty(DType::BF16, {2, 4});
  EXPECT_NE(tf::test_support::error_message([&] { linear(x, w, y, {.residual = &h}); }).find("takes no y"), std::string::npos);
  EXPECT_NE(tf::test_support::error_message([&] { linear(x, w, {.residual = &h, .norm_weight = &w}); }).find("needs both"), std::string::npos);
  EXPECT_NE(tf::test_support::error_message([&] { linear(x, w, LinearEpilogue{}); }).find("no residual"), std::string::npos);
  Tensor nw = random_bf16({4}, 24), y2 = empty(DType::BF16, {2, 4});
  EXPECT_NE(tf::test_support::error_message([&] {
              linear(x, w, {.residual = &h, .norm_weight = &nw, .norm = {NormWeight::plain, 1e-6f}, .norm_out = &y2, .shift = &nw});
            }).find("modulated norm needs shift, scale"),
            std::string::npos);
  Tensor bad = random_bf16({5}, 23);
  EXPECT_NE(tf::test_support::error_message([&] { linear(x, w, y, {.bias = &bad}); }).find("bias"), std::string::npos);
}

TEST(RopeVariants, TablesFromPositionsOnAxesAreAxisMajorAndReduceToTheSequentialForm) {
  // one axis at positions 0 .. n-1 with transformers' bands: the sequential tables' values before their rounding
  const int64_t n = 9, rot = 12;
  const double theta = 1e4;
  Tensor pos = empty(DType::F32, {n, 1}), bands = empty(DType::F32, {rot / 2});
  for (int64_t p = 0; p < n; ++p) pos.ptr<float>()[p] = static_cast<float>(p);
  for (int64_t j = 0; j < rot / 2; ++j)
    bands.ptr<float>()[j] = 1.0f / std::pow(static_cast<float>(theta), static_cast<float>(2 * j) / static_cast<float>(rot));
  const RopeTables one = make_rope_tables(pos, bands), seq = make_rope_tables(n, rot, theta);
  ASSERT_EQ(one.cos.dtype, DType::F32);
  ASSERT_EQ(one.cos.shape, seq.cos.shape);
  for (int64_t i = 0; i < one.cos.numel(); ++i) {
    EXPECT_EQ(bits(one.cos.ptr<float>()[i]), seq.cos.ptr<uint16_t>()[i]) << i;
    EXPECT_EQ(bits(one.sin.ptr<float>()[i]), seq.sin.ptr<uint16_t>()[i]) << i;
  }
  // four axes of two bands, fractional positions (an image token's centred h, w): axis a's bands at a*2
  Tensor p4 = empty(DType::F32, {2, 4}), b2 = empty(DType::F32, {2});
  const float rows[2][4] = {{0.0f, 7.0f, -1.5f, 2.5f}, {0.0f, 3.0f, 0.0f, 0.0f}};
  for (int64_t i = 0; i < 8; ++i) p4.ptr<float>()[i] = rows[i / 4][i % 4];
  b2.ptr<float>()[0] = 1.0f;
  b2.ptr<float>()[1] = 0.01f;
  const RopeTables t = make_rope_tables(p4, b2);
  ASSERT_EQ(t.cos.shape, (Shape{2, 8}));
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t j = 0; j < 2; ++j) {
        const float phase = rows[r][a] * b2.ptr<float>()[j];
        EXPECT_EQ(t.cos.ptr<float>()[r * 8 + a * 2 + j], std::cos(phase)) << r << " " << a << " " << j;
        EXPECT_EQ(t.sin.ptr<float>()[r * 8 + a * 2 + j], std::sin(phase)) << r << " " << a << " " << j;
      }
  EXPECT_NE(tf::test_support::error_message([&] { make_rope_tables(bands, bands); }).find("positions"), std::string::npos);
  EXPECT_NE(tf::test_support::error_message([&] { make_rope_tables(pos, pos); }).find("bands"), std::string::npos);
}
