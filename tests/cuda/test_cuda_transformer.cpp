// The MOSS-Image transformer on CUDA: the committed tiny case through the reference gate (steps,
// repeats, packing) and its controls, a released-geometry case when TF_RELEASED_TRANSFORMER_CASE and
// TF_RELEASED_TRANSFORMER_MODEL name one made on the GPU machine, and the flash attention kernel's
// bytes for a sequence packed beside others.
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "backend/attention/attention.h"
#include "backend/elementwise/situ_gated_product.h"
#include "backend/linear/linear.h"
#include "backend/variants.h"
#include "check/gate/transformer.h"
#include "check/random_tensor.h"
#include "cuda_test_util.h"
#include "families/moss_image/sampler/sample.h"
#include "families/moss_image/sampler/schedule.h"
#include "families/moss_image/transformer/transformer.h"
#include "io/checkpoint.h"

namespace tf {
namespace {

const std::string kData = TF_TEST_DATA;

check::gate::GateReport gate(const moss_image::Transformer& t, const std::string& case_path, const std::string& plant,
                             std::string* log) {
  std::ostringstream out;
  auto r = check::gate::run_transformer_gate(t, {case_path, check::gate::Plant::parse(plant)}, out);
  *log = out.str();
  return r;
}

void expect_gate(const std::string& model, const std::string& case_path) {
  if (!path_exists(case_path)) GTEST_SKIP() << case_path << " absent";
  const auto t = moss_image::Transformer::load(model, {Device::CUDA, true});
  std::string log;
  const auto r = gate(t, case_path, "", &log);
  std::printf("%s", log.c_str());
  EXPECT_TRUE(r.passed()) << log;
  EXPECT_TRUE(r.repeat_same);
  EXPECT_TRUE(r.packing_same.value_or(false)) << log;
  EXPECT_FALSE(gate(t, case_path, "row", &log).passed()) << "a planted row passed the gate on CUDA";
  EXPECT_FALSE(gate(t, case_path, "repeat", &log).passed()) << "a planted repeat passed the gate on CUDA";
}

TEST(CudaTransformer, TinyCase) {
  TF_REQUIRE_CUDA_GPU();
  expect_gate(kData + "/moss-transformer-tiny", kData + "/moss-transformer-cases/tiny.safetensors");
}

TEST(CudaTransformer, ReleasedGeometryCase) {
  TF_REQUIRE_CUDA_GPU();
  const char* c = std::getenv("TF_RELEASED_TRANSFORMER_CASE");
  const char* m = std::getenv("TF_RELEASED_TRANSFORMER_MODEL");
  if (!c || !m) GTEST_SKIP() << "TF_RELEASED_TRANSFORMER_CASE / TF_RELEASED_TRANSFORMER_MODEL not set";
  expect_gate(m, c);
}

// A guidance step's layout seen a first time (eager), a second (recorded, then replayed) and a third
// (replayed): the same bytes each time, and the same as every pass launched kernel by kernel.
TEST(CudaTransformer, RecordedPassGivesTheEagerBytes) {
  TF_REQUIRE_CUDA_GPU();
  const auto t = moss_image::Transformer::load(kData + "/moss-transformer-tiny", {Device::CUDA, true});
  const int64_t C = t.config().latent_channels, Dt = t.config().text_dim;
  const std::vector<moss_image::TransformerSample> step{
      {check::random_normal_tensor(DType::F32, {C, 6, 4}, 1), check::random_normal_tensor(DType::BF16, {7, Dt}, 2), {}},
      {check::random_normal_tensor(DType::F32, {C, 6, 4}, 1), check::random_normal_tensor(DType::BF16, {3, Dt}, 3), {2}}};
  auto bytes = [&](float sigma) {
    std::vector<Tensor> v = t.velocity(step, sigma);
    std::vector<uint8_t> b;
    for (const Tensor& x : v) b.insert(b.end(), x.ptr<uint8_t>(), x.ptr<uint8_t>() + x.nbytes());
    return b;
  };
  const auto eager = bytes(0.5f), recorded = bytes(0.5f), replayed = bytes(0.5f);
  EXPECT_EQ(eager, recorded);
  EXPECT_EQ(eager, replayed);
  const auto quarter = bytes(0.25f);  // a replay with sigma changed in device memory
  EXPECT_NE(eager, quarter) << "a replay at another sigma gave the same velocity";
  variants::Override off(Variant::cuda_graph, "off");
  EXPECT_EQ(quarter, bytes(0.25f)) << "the replay differs from the pass launched kernel by kernel";
}

// The sampling loop on the device (its steps recorded and replayed) gives the bytes of the host's loop
// over the same CUDA transformer's velocities, with and without the negative branch.
TEST(CudaTransformer, SamplerLoopGivesTheHostLoopsBytes) {
  TF_REQUIRE_CUDA_GPU();
  const auto t = moss_image::Transformer::load(kData + "/tiny-pipeline", {Device::CUDA, true});
  for (bool guided : {true, false}) {
    moss_image::SamplingRun r;
    r.noise = check::random_normal_tensor(DType::F32, {128, 6, 4}, 5, 1.0f);
    r.rows = check::random_normal_tensor(DType::BF16, {7, 64}, 6, 1.0f);
    if (guided) r.negative_rows = check::random_normal_tensor(DType::BF16, {3, 64}, 7, 1.0f);
    r.negative_skip_layers = {22};
    r.sigmas = moss_image::schedule_sigmas(5, 5.0);
    r.guidance = guided ? 3.0 : 1.0;
    Tensor x;
    {
      variants::Override host(Variant::sampler_loop, "host");
      x = moss_image::sample(t, r);
    }
    const Tensor got = moss_image::sample(t, r);
    EXPECT_EQ(std::memcmp(got.data, x.data, x.nbytes()), 0) << (guided ? "guided" : "cond only");
  }
}

// SiTU's lookup kernel gives the formula kernel's bytes for every bf16 up and gate pattern (each
// paired with two others).
TEST(CudaTransformer, SituLookupGivesTheFormulasBytes) {
  TF_REQUIRE_CUDA_GPU();
  const int64_t n = 1 << 17;
  Tensor up = empty(DType::BF16, {n}), gate = empty(DType::BF16, {n});
  for (int64_t i = 0; i < n; ++i) {
    up.ptr<uint16_t>()[i] = static_cast<uint16_t>(i);
    gate.ptr<uint16_t>()[i] = static_cast<uint16_t>(i < n / 2 ? i * 40503u : i * 7u + 12345u);
  }
  const Tensor u = to_device(up, Device::CUDA), g = to_device(gate, Device::CUDA);
  auto run = [&](const char* choice) {
    variants::Override v(Variant::situ, choice);
    Tensor y = empty(DType::BF16, {n}, Device::CUDA);
    situ_gated_product(u, g, y);
    return to_device(y, Device::CPU);
  };
  const Tensor a = run("lookup"), b = run("formula");
  EXPECT_EQ(0, std::memcmp(a.data, b.data, a.nbytes()));
}

Tensor random_bf16(uint32_t seed, Shape s) {
  return to_device(check::random_normal_tensor(DType::BF16, s, seed), Device::CUDA);
}

// The wgmma kernel (head dims 64 and 128): a sequence's rows are the same bytes alone and packed
// between others of other lengths, and every run repeats them.
TEST(CudaTransformer, FlashAttentionPackedBytesAreEachSequencesOwn) {
  TF_REQUIRE_CUDA_GPU();
  for (int64_t d : {64, 128}) {
    const int64_t a = 300, b = 77, c = 129, T = a + b + c, H = 3;
    const uint32_t seed = static_cast<uint32_t>(d);
    const Tensor q = random_bf16(seed, {T, H, d}), k = random_bf16(seed + 1, {T, H, d}), v = random_bf16(seed + 2, {T, H, d});
    const AttentionOptions packed{.scale = 0.09f, .mask = AttentionMask::none, .sequences = {0, a, a + b, T},
                                  .numerics = AttentionNumerics::fused};
    Tensor o = empty(DType::BF16, {T, H, d}, Device::CUDA), again = empty(DType::BF16, {T, H, d}, Device::CUDA);
    attention(q, k, v, packed, o);
    attention(q, k, v, packed, again);
    const Tensor oh = to_device(o, Device::CPU);
    EXPECT_EQ(0, std::memcmp(oh.data, to_device(again, Device::CPU).data, oh.nbytes())) << "head dim " << d;
    // the middle sequence alone
    auto mid = [&](const Tensor& x) {
      Tensor y = empty(DType::BF16, {b, H, d}, Device::CUDA);
      copy_into(y, x.rows(a, a + b));
      return y;
    };
    Tensor alone = empty(DType::BF16, {b, H, d}, Device::CUDA);
    AttentionOptions one = packed;
    one.sequences = {0, b};
    attention(mid(q), mid(k), mid(v), one, alone);
    const Tensor ah = to_device(alone, Device::CPU);
    EXPECT_EQ(0, std::memcmp(ah.data, oh.rows(a, a + b).data, ah.nbytes())) << "head dim " << d;
  }
}

// A product's rows are the same bytes whatever rows share it above the packed-rows limit (a guidance
// step packs its two branches), at the transformer's shapes, with and without a bias.
TEST(CudaTransformer, ProductRowsDoNotDependOnTheRowCount) {
  TF_REQUIRE_CUDA_GPU();
  const int64_t rows = 8312, tail = 4116;
  for (auto [K, N] : {std::pair<int64_t, int64_t>{3072, 9216}, {3072, 3072}, {8192, 3072}, {3072, 8192}}) {
    const Tensor x = random_bf16(11, {rows, K}), w = random_bf16(12, {N, K}), b = random_bf16(13, {N});
    for (bool bias : {false, true}) {
      Tensor all = empty(DType::BF16, {rows, N}, Device::CUDA), part = empty(DType::BF16, {tail, N}, Device::CUDA);
      Tensor xs = empty(DType::BF16, {tail, K}, Device::CUDA);
      copy_into(xs, x.rows(rows - tail, rows));
      linear(x, w, all, {.bias = bias ? &b : nullptr});
      linear(xs, w, part, {.bias = bias ? &b : nullptr});
      const Tensor ah = to_device(all, Device::CPU), ph = to_device(part, Device::CPU);
      EXPECT_EQ(0, std::memcmp(ph.data, ah.rows(rows - tail, rows).data, ph.nbytes()))
          << "K " << K << " N " << N << (bias ? " with bias" : "");
    }
  }
}

}  // namespace
}  // namespace tf
