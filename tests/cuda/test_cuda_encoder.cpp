// The MOSS-Image encoder on CUDA against the same encoder on the CPU (the tiny checkpoints made by
// transformers): each step alone and the whole packed forward agree to bf16 rounding noise, and
// the CUDA run repeats byte for byte. The reference gate itself runs through
// tf-moss-image check encoder --device cuda on the GPU machine.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/embed/embedding.h"
#include "check/compare.h"
#include "core/bf16.h"
#include "cuda_test_util.h"
#include "families/moss_image/encoder/encoder.h"
#include "io/checkpoint.h"

namespace tf {
namespace {

moss_image::Encoder load(const std::string& name, Device d) {
  LoadOptions o;
  o.device = d;
  return moss_image::Encoder::load(resolve_component(std::string(TF_TEST_DATA) + "/" + name, "text_encoder"), o);
}

void agree(const char* which) {
  moss_image::Encoder cpu = load(which, Device::CPU), gpu = load(which, Device::CUDA);
  const SeqOffsets offs = {0, 70, 80, 80, 210};  // 70: over a chunk edge; an empty prompt; a long one
  std::mt19937 g(7);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(cpu.config().vocab_size - 1));
  std::vector<int32_t> ids(offs.back());
  for (int32_t& id : ids) id = tok(g);

  Tensor a = cpu.forward(ids, offs), b = gpu.forward(ids, offs), b2 = gpu.forward(ids, offs);
  ASSERT_EQ(a.shape, b.shape);
  EXPECT_EQ(0, std::memcmp(b.data, b2.data, b.nbytes())) << which << ": CUDA repeat differs";
  for (size_t s = 0; s + 1 < offs.size(); ++s) {  // each prompt alone: the bytes it got packed
    const int64_t n = offs[s + 1] - offs[s];
    if (n == 0) continue;
    Tensor alone = gpu.forward(std::vector<int32_t>(ids.begin() + offs[s], ids.begin() + offs[s + 1]), single_sequence(n));
    EXPECT_EQ(0, std::memcmp(alone.data, b.rows(offs[s], offs[s + 1]).data, alone.nbytes())) << which << " prompt " << s;
  }
  check::Distance whole = check::compare_rows(b, a);
  EXPECT_TRUE(whole.finite);
  EXPECT_LT(whole.cosine_error, 1e-3) << which << " whole forward: " << check::describe(whole);

  // each step alone on the same bf16 input: only that step's arithmetic differs
  Tensor rows = empty(DType::BF16, {offs.back(), cpu.config().hidden});
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t i = 0; i < rows.numel(); ++i) rows.ptr<bf16>()[i] = to_bf16(nd(g));
  Tensor drows = to_device(rows, Device::CUDA);
  for (int64_t s = 0; s < cpu.steps(); ++s) {
    Tensor x = cpu.run_step(s, rows, offs), y = gpu.run_step(s, drows, offs);
    check::Distance d = check::compare_rows(y, x);
    EXPECT_LT(d.cosine_error, 1e-4) << which << " " << cpu.step_name(s) << ": " << check::describe(d);
    EXPECT_LT(d.worst_row, 2e-2) << which << " " << cpu.step_name(s) << ": " << check::describe(d);
  }
}

TEST(CudaEncoder, RecordedForwardGivesTheEagerBytes) {
  TF_REQUIRE_CUDA_GPU();
  // a layout's second forward records a CUDA graph, later ones replay it: each must give the bytes
  // of an eager forward of the same ids, also for new ids and with other layouts in between
  moss_image::Encoder enc = load("tiny-pipeline", Device::CUDA);
  moss_image::Encoder fresh = load("tiny-pipeline", Device::CUDA);  // sees each layout once: eager
  std::mt19937 g(11);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(enc.config().vocab_size - 1));
  auto ids_of = [&](int64_t n) {
    std::vector<int32_t> ids(n);
    for (int32_t& id : ids) id = tok(g);
    return ids;
  };
  const SeqOffsets pair = {0, 40, 50};
  const std::vector<int32_t> a = ids_of(50), b = ids_of(50), c = ids_of(30);
  Tensor eager_a = fresh.forward(a, pair);
  Tensor eager_c = load("tiny-pipeline", Device::CUDA).forward(c, single_sequence(30));
  Tensor eager_b = load("tiny-pipeline", Device::CUDA).forward(b, pair);
  for (int round = 0; round < 3; ++round) {  // eager, record + replay, replay
    Tensor got = enc.forward(a, pair);
    EXPECT_EQ(0, std::memcmp(got.data, eager_a.data, got.nbytes())) << "round " << round;
    Tensor other = enc.forward(c, single_sequence(30));
    EXPECT_EQ(0, std::memcmp(other.data, eager_c.data, other.nbytes())) << "other layout, round " << round;
  }
  Tensor replayed_b = enc.forward(b, pair);  // the recorded graph with new ids
  EXPECT_EQ(0, std::memcmp(replayed_b.data, eager_b.data, replayed_b.nbytes())) << "new ids through the graph";
}

TEST(CudaEncoder, ForwardGivesTheBytesOfItsStepsChained) {
  TF_REQUIRE_CUDA_GPU();
  // the forward (eager, then recorded) fuses each layer's last residual add with the next norm;
  // the steps keep them apart: the same bytes on the GPU too
  moss_image::Encoder enc = load("tiny-pipeline", Device::CUDA);
  std::vector<int32_t> ids;
  for (int32_t t = 0; t < 37; ++t) ids.push_back((t * 977 + 5) % static_cast<int32_t>(enc.config().vocab_size));
  const int64_t n = static_cast<int64_t>(ids.size());
  Tensor id_rows = empty(DType::I32, {n});
  std::copy(ids.begin(), ids.end(), id_rows.ptr<int32_t>());
  Tensor rows = empty(DType::BF16, {n, enc.config().hidden}, Device::CUDA);
  embedding(enc.weights().embed_tokens, to_device(id_rows, Device::CUDA), rows);
  for (int64_t s = 0; s < enc.steps(); ++s) rows = to_device(enc.run_step(s, rows, single_sequence(n)), Device::CUDA);
  Tensor chained = to_device(rows, Device::CPU);
  for (int round = 0; round < 3; ++round) {  // eager, record + replay, replay
    Tensor out = enc.forward(ids, single_sequence(n));
    EXPECT_EQ(0, std::memcmp(out.data, chained.data, out.nbytes())) << "round " << round;
  }
}

TEST(CudaEncoder, TinyPipelineMatchesCpu) {
  TF_REQUIRE_CUDA_GPU();
  agree("tiny-pipeline");
}

TEST(CudaEncoder, TinyBMatchesCpu) {
  TF_REQUIRE_CUDA_GPU();
  agree("moss-tiny-b");
}

}  // namespace
}  // namespace tf
