// The sampling loop on the device gives the bytes of the host's loop (TF_SAMPLER_LOOP=host: velocity, guided, euler_step),
// with and without the negative branch; the step callback sees every step and can stop the run.
#include <gtest/gtest.h>

#include <cstring>

#include "backend/variants.h"
#include "check/random_tensor.h"
#include "core/error.h"
#include "families/moss_image/sampler/sample.h"
#include "families/moss_image/sampler/schedule.h"

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

}  // namespace

TEST(SamplerLoop, GivesTheHostLoopsBytes) {
  for (bool guided : {true, false}) {
    const moss_image::SamplingRun r = run(guided);
    Tensor want;
    {
      variants::Override host(Variant::sampler_loop, "host");  // velocities to the host, update.h's guided, euler_step
      want = moss_image::sample(tiny(), r);
    }
    const Tensor got = moss_image::sample(tiny(), r);
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
