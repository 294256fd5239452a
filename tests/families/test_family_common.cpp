// The mechanisms every family shares (families/common): progress events, the memory refusal,
// steps, and the recorded-work and table caches.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "families/common/caches.h"
#include "families/common/memory.h"
#include "families/common/progress.h"
#include "families/common/steps.h"
#include "support/error_message.h"

using namespace tf;


TEST(FamilyProgress, OffsetEventsCountInTheOuterRun) {
  std::vector<std::pair<std::string, int64_t>> seen;
  Progress outer = [&](const ProgressEvent& e) {
    EXPECT_EQ(e.total, 10);
    seen.emplace_back(e.step, e.done);
  };
  const Progress inner = offset_progress(outer, 4, 10);
  report(inner, "a", 1, 3);
  report(inner, "b", 3, 3);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::pair<std::string, int64_t>{"a", 5}));
  EXPECT_EQ(seen[1], (std::pair<std::string, int64_t>{"b", 7}));
  EXPECT_FALSE(offset_progress(Progress(), 4, 10));  // nothing to forward to: no progress at all
  report(Progress(), "nobody", 1, 1);                // and reporting to none is a no-op
}

TEST(FamilySteps, RunInOrderReportingEachAndFoundByName) {
  const std::vector<Step> steps = {
      {"double", [](const Tensor& x) { Tensor y = empty(DType::F32, x.shape); y.ptr<float>()[0] = 2 * x.ptr<float>()[0]; return y; }},
      {"plus one", [](const Tensor& x) { Tensor y = empty(DType::F32, x.shape); y.ptr<float>()[0] = x.ptr<float>()[0] + 1; return y; }}};
  Tensor x = empty(DType::F32, {1});
  x.ptr<float>()[0] = 3;
  std::vector<std::string> names;
  const Tensor y = run_steps(steps, x, [&](const ProgressEvent& e) { names.push_back(e.step + " " + std::to_string(e.done) + "/" + std::to_string(e.total)); });
  EXPECT_EQ(y.ptr<float>()[0], 7.0f);  // (3 * 2) + 1: the order matters
  EXPECT_EQ(names, (std::vector<std::string>{"double 1/2", "plus one 2/2"}));
  EXPECT_EQ(&find_step(steps, "plus one", "c.safetensors"), &steps[1]);
  const std::string m = tf::test_support::error_message([&] { find_step(steps, "minus", "c.safetensors"); });
  EXPECT_NE(m.find("c.safetensors"), std::string::npos) << m;
  EXPECT_NE(m.find("\"minus\""), std::string::npos) << m;
  EXPECT_NE(m.find("double, plus one"), std::string::npos) << m;
}

TEST(FamilyMemory, RefusalStatesTheRunTheEstimateAndWhatIsAvailable) {
  const AvailableMemory have{16ull << 30, "physical memory"};
  require_memory({15.9 * kGiB, "dec.up.3"}, have, "--latents z.safetensors", "decoding a 64x64 picture", "never said");
  const std::string m = tf::test_support::error_message([&] {
    require_memory({40 * kGiB, "dec.up.3"}, have, "--latents z.safetensors", "decoding a 8192x4096 picture",
                   "use a smaller picture (4096x2048 fits)");
  });
  EXPECT_EQ(m, "--latents z.safetensors: decoding a 8192x4096 picture needs an estimated 40 GiB (peak in dec.up.3), "
               "more than the 16 GiB available (physical memory); use a smaller picture (4096x2048 fits)");
  PeakWalk walk;
  walk.live(3, "a");
  walk.live(5, "b");
  walk.live(4, "c");
  EXPECT_EQ(walk.peak().bytes, 5);
  EXPECT_EQ(walk.peak().peak, "b");
}

TEST(FamilyCaches, RecordedWorkRecordsOnTheSecondSightAndKeepsAtMostItsCapacity) {
  RecordedCache<int, int> cache(2);
  int recorded = 0, used = 0;
  auto record = [&](int& e) { e = ++recorded; };
  auto use = [&](int& e) { used = e; };
  bool stale_now = false;
  auto stale = [&](const int&) { return stale_now; };
  EXPECT_FALSE(cache.replay(7, record, stale, use));  // first sight: eager
  EXPECT_EQ(recorded, 0);
  EXPECT_TRUE(cache.replay(7, record, stale, use));  // second: recorded, replayed
  EXPECT_EQ(recorded, 1);
  EXPECT_TRUE(cache.replay(7, record, stale, use));  // third: replayed, not recorded again
  EXPECT_EQ(recorded, 1);
  EXPECT_EQ(used, 1);
  EXPECT_FALSE(cache.replay(8, record, stale, use));
  EXPECT_FALSE(cache.replay(9, record, stale, use));  // past the capacity of two keys
  EXPECT_FALSE(cache.replay(9, record, stale, use));  // ... always eager
  EXPECT_TRUE(cache.replay(8, record, stale, use));
  EXPECT_EQ(recorded, 2);
  stale_now = true;  // recorded under other variants: recorded again before the replay
  EXPECT_TRUE(cache.replay(7, record, stale, use));
  EXPECT_EQ(recorded, 3);
  EXPECT_EQ(used, 3);
  stale_now = false;
  // a recording that throws leaves the key to record again
  RecordedCache<int, int> failing(1);
  failing.replay(1, record, stale, use);
  EXPECT_THROW(failing.replay(1, [](int&) { fail("capture failed"); }, stale, use), Error);
  EXPECT_TRUE(failing.replay(1, record, stale, use));
  EXPECT_EQ(recorded, 4);
}

TEST(FamilyCaches, PrefixTablesAreRemadeOnlyWhenLonger) {
  PrefixTableCache<std::vector<int>> cache;
  int made = 0;
  auto make = [&](int64_t rows) {
    ++made;
    std::vector<int> t;
    for (int64_t i = 0; i < rows; ++i) t.push_back(static_cast<int>(i * i));
    return t;
  };
  auto first = [](const std::vector<int>& t, int64_t rows) { return std::vector<int>(t.begin(), t.begin() + rows); };
  EXPECT_EQ(cache.get(4, make, first), (std::vector<int>{0, 1, 4, 9}));
  EXPECT_EQ(cache.get(2, make, first), (std::vector<int>{0, 1}));
  EXPECT_EQ(made, 1);
  EXPECT_EQ(cache.get(5, make, first).back(), 16);
  EXPECT_EQ(made, 2);
}
