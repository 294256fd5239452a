// The starting noise: torch.randn under a seeded CPU generator, byte for byte against draws torch
// made (tests/data/sampler/randn.safetensors, written by python/cases/sampler_data.py).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/bytes_hash.h"
#include "families/moss_image/sampler/noise.h"
#include "io/safetensors.h"
#include "support/error_message.h"

using namespace tf;
using tf::moss_image::torch_randn_f32;
using tf::test_support::error_message;

namespace {

const std::string kData = std::string(TF_TEST_DATA) + "/sampler/randn.safetensors";
const uint64_t kSeeds[] = {0, 1, 42, (uint64_t{1} << 32) + 5, 0xDEADBEEFCAFEF00Dull};

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape == b.shape && a.dtype == b.dtype && std::memcmp(a.data, b.data, a.nbytes()) == 0;
}

// The first index where two equally long F32 tensors differ, or -1.
int64_t first_difference(const Tensor& a, const Tensor& b) {
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(a.ptr<float>() + i, b.ptr<float>() + i, 4) != 0) return i;
  return -1;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

// Every stored draw (sizes 1, 2, 5, 15 on the scalar path; 16, 17, 31, 32, 33, 1000, 1x128x4x3 on
// the blocks of 16, ragged ends included) for each seed, bit for bit.
TEST(SamplerNoise, MatchesTorchBitForBit) {
  const auto f = SafetensorsFile::open(kData);
  int checked = 0;
  for (const auto& [name, entry] : f->entries()) {
    if (name.rfind("randn.", 0) != 0) continue;
    const uint64_t seed = std::stoull(name.substr(7, name.find(".n") - 7));
    const Tensor want = f->get(name);
    const Tensor got = torch_randn_f32(want.shape, seed);
    EXPECT_TRUE(same_bytes(got, want)) << name << ": first difference at " << first_difference(got, want);
    ++checked;
  }
  EXPECT_EQ(checked, 5 * 11);
}

// 1x128x64x64 (a 1024x1024 picture's latents): the FNV-1a hash of all bytes and the first and
// last 16 values.
TEST(SamplerNoise, LatentSizedDrawHashAndEnds) {
  const auto f = SafetensorsFile::open(kData);
  for (uint64_t seed : kSeeds) {
    const std::string s = std::to_string(seed);
    const Tensor got = torch_randn_f32({1, 128, 64, 64}, seed);
    const Tensor flat = got.reshaped({got.numel()});
    EXPECT_EQ(std::memcmp(flat.ptr<float>(), f->get("big.s" + s + ".head").data, 64), 0) << "seed " << s;
    EXPECT_EQ(std::memcmp(flat.ptr<float>() + got.numel() - 16, f->get("big.s" + s + ".tail").data, 64), 0)
        << "seed " << s;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(bytes_hash(got.data, got.nbytes())));
    EXPECT_EQ(std::string(hex), f->metadata().at("hash.s" + s)) << "seed " << s;
  }
}

// Two values torch drew where cos is nearly zero, found by comparing 40 draws of 2^20 with torch: the
// only ones of 42M where the last product of the angle reduction, unfused, changes the result.
TEST(SamplerNoise, AngleReductionNearQuarterTurns) {
  EXPECT_EQ(torch_randn_f32({1 << 20}, 107).ptr<float>()[849750], -0x1.dfb010p-21f);
  EXPECT_EQ(torch_randn_f32({1 << 20}, 133).ptr<float>()[118755], 0x1.3dc912p-21f);
}

// torch seeds its MT19937 with the low 32 bits: 2^32 + 5 draws as 5 does.
TEST(SamplerNoise, SeedUsesLow32Bits) {
  EXPECT_TRUE(same_bytes(torch_randn_f32({1000}, (uint64_t{1} << 32) + 5), torch_randn_f32({1000}, 5)));
  EXPECT_FALSE(same_bytes(torch_randn_f32({1000}, 6), torch_randn_f32({1000}, 5)));
}

// A ragged size redraws its last 16 values: the first n - 16 of a draw of n > 16 are those of a
// draw of any size with the same full blocks, the rest are not.
TEST(SamplerNoise, RaggedEndRedrawsLastSixteen) {
  const Tensor a = torch_randn_f32({40}, 42), b = torch_randn_f32({32}, 42);
  EXPECT_EQ(std::memcmp(a.data, b.data, 24 * 4), 0);
  EXPECT_NE(std::memcmp(a.ptr<float>() + 24, b.ptr<float>() + 24, 8 * 4), 0);
}

TEST(SamplerNoise, ShapesAndRefusals) {
  const Tensor e = torch_randn_f32({1, 0, 4}, 1);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.dtype, DType::F32);
  EXPECT_TRUE(contains(error_message([] { torch_randn_f32({2, -1}, 1); }), "expected non-negative sizes"));
  EXPECT_TRUE(contains(error_message([] { torch_randn_f32({1 << 20, 1 << 20}, 1); }), "expected at most 2^32"));
}
