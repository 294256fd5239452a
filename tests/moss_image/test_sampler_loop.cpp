// The sampling loop on the device gives the bytes of the host's loop (velocity, guided, euler_step),
// with and without the negative branch; the step callback sees every step and can stop the run.
#include <gtest/gtest.h>

#include <cstring>

#include "check/random_tensor.h"
#include "core/error.h"
#include "families/moss_image/sampler/sample.h"
#include "families/moss_image/sampler/schedule.h"
#include "families/moss_image/sampler/update.h"

using namespace tf;

namespace {

const moss_image::Transformer& tiny() {
  static const moss_image::Transformer t =
      moss_image::Transformer::load(std::string(TF_TEST_DATA) + "/tiny-pipeline", {Device::CPU, true});
  return t;
}

moss_image::SamplingRun run(bool guided) {
  moss_image::SamplingRun r;
  r.noise = check::random_normal_tensor(DType::F32, {128, 3, 2}, 5, 1.0f);
  r.rows = check::random_normal_tensor(DType::BF16, {5, 64}, 6, 1.0f);
  if (guided) r.negative_rows = check::random_normal_tensor(DType::BF16, {3, 64}, 7, 1.0f);
  r.negative_skip_layers = {22};
  r.sigmas = moss_image::schedule_sigmas(4, 5.0);
  r.guidance = guided ? 3.0 : 1.0;
  return r;
}

Tensor host_loop(const moss_image::Transformer& tr, const moss_image::SamplingRun& r) {
  Tensor x = empty(DType::F32, r.noise.shape);
  copy_into(x, r.noise);
  for (size_t i = 0; i + 1 < r.sigmas.size(); ++i) {
    std::vector<moss_image::TransformerSample> s{{x, r.rows, {}}};
    if (r.negative_rows.defined()) s.push_back({x, r.negative_rows, r.negative_skip_layers});
    const std::vector<Tensor> v = tr.velocity(s, r.sigmas[i]);
    const Tensor pred = s.size() > 1 ? moss_image::guided(v[0], v[1], r.guidance) : v[0];
    moss_image::euler_step(x, pred, r.sigmas[i], r.sigmas[i + 1]);
  }
  return x;
}

}  // namespace

TEST(SamplerLoop, GivesTheHostLoopsBytes) {
  for (bool guided : {true, false}) {
    const moss_image::SamplingRun r = run(guided);
    const Tensor want = host_loop(tiny(), r), got = moss_image::sample(tiny(), r);
    ASSERT_EQ(got.shape, want.shape);
    EXPECT_EQ(std::memcmp(got.data, want.data, want.nbytes()), 0) << (guided ? "guided" : "cond only");
  }
}

TEST(SamplerLoop, TheStepCallbackSeesEveryStepAndCanStop) {
  const moss_image::SamplingRun r = run(true);
  std::vector<int64_t> seen;
  const Tensor last = moss_image::sample(tiny(), r, {}, [&](int64_t i, int64_t n, const Tensor& x) {
    EXPECT_EQ(n, 4);
    EXPECT_EQ(x.shape, (Shape{128, 3, 2}));
    seen.push_back(i);
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_THROW(moss_image::sample(tiny(), r, {}, [](int64_t i, int64_t, const Tensor&) {
                 if (i == 1) fail("stopped");
               }),
               Error);
}
