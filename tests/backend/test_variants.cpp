#include "backend/variants.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "backend/linear/linear.h"
#include "core/error.h"

namespace tf {
namespace {

// Sets one environment variable for its scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string_view name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name_.c_str())) had_ = true, old_ = old;
    if (value) setenv(name_.c_str(), value, 1);
    else unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

std::string error_of(Variant v, const char* choice) {
  try {
    variants::Override o(v, choice);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Variants, RowsAreUniqueWithTheirDefaultFirstAndTwoWaySwitchesOnOff) {
  std::set<std::string_view> names;
  for (const VariantRow& r : kVariantTable) {
    EXPECT_TRUE(names.insert(r.env).second) << r.env << " twice";
    EXPECT_EQ(r.env.substr(0, 3), "TF_") << r.env;
    EXPECT_FALSE(r.chooses.empty()) << r.env;
    const int n = variants::choice_count(r);
    std::set<std::string_view> choices(r.choices.begin(), r.choices.begin() + n);
    EXPECT_EQ(int(choices.size()), n) << r.env << ": a choice twice";
    for (int i = n; i < int(r.choices.size()); ++i) EXPECT_TRUE(r.choices[i].empty()) << r.env << ": a gap";
    const int at = variants::choice_index(r.variant, "auto");
    EXPECT_TRUE(at <= 0) << r.env << ": auto is the default where a row has it";
    if (choices.count("on") || choices.count("off")) {
      EXPECT_TRUE(n == 2 && r.choices[0] == "on" && r.choices[1] == "off") << r.env << ": two-way rows are on, off";
    }
    for (std::string_view c : choices)
      EXPECT_TRUE(c != "1" && c != "0" && c != "true" && c != "false") << r.env << ": on/off is the spelling";
  }
}

TEST(Variants, UnsetOrEmptyGivesTheDefaultAndEachChoiceItsIndex) {
  for (const VariantRow& r : kVariantTable) {
    const size_t i = static_cast<size_t>(r.variant);
    {
      ScopedEnv e(r.env, nullptr);
      EXPECT_EQ(variants::from_environment()[i], 0) << r.env << " unset";
    }
    {
      ScopedEnv e(r.env, "");
      EXPECT_EQ(variants::from_environment()[i], 0) << r.env << " empty";
    }
    for (int c = 0; c < variants::choice_count(r); ++c) {
      ScopedEnv e(r.env, std::string(r.choices[c]).c_str());
      EXPECT_EQ(variants::from_environment()[i], c) << r.env << "=" << r.choices[c];
    }
  }
}

TEST(Variants, AMisspeltValueIsAnErrorNamingTheVariableAndItsChoices) {
  {
    ScopedEnv e("TF_DELTA_RULE", "Chunked");
    try {
      variants::from_environment();
      FAIL() << "no error";
    } catch (const Error& err) {
      EXPECT_EQ(std::string(err.what()), "TF_DELTA_RULE=Chunked: expected auto, recurrent or chunked");
    }
  }
  ScopedEnv old_spelling("TF_CUDA_GRAPH", "0");
  EXPECT_THROW(variants::from_environment(), Error) << "TF_CUDA_GRAPH takes on or off";
}

TEST(Variants, OverridesNestAndRestoreThePreviousChoice) {
  const int before = variant(Variant::gemm);
  {
    variants::Override outer(Variant::gemm, "cublaslt");
    EXPECT_TRUE(variant_is<Variant::gemm>("cublaslt"));
    {
      variants::Override inner(Variant::gemm, "auto");
      EXPECT_TRUE(variant_is<Variant::gemm>("auto"));
      EXPECT_EQ(variant(Variant::delta_rule), variants::current()[size_t(Variant::delta_rule)]) << "one row only";
    }
    EXPECT_TRUE(variant_is<Variant::gemm>("cublaslt")) << "the inner override did not restore the outer's choice";
    EXPECT_EQ(variants::current()[size_t(Variant::gemm)], 1);
  }
  EXPECT_EQ(variant(Variant::gemm), before) << "the outer override did not restore the first choice";
}

TEST(Variants, AnUnknownOverrideIsAnErrorAndChangesNothing) {
  const variants::Choices before = variants::current();
  EXPECT_EQ(error_of(Variant::cuda_graph, "0"), "variants::Override TF_CUDA_GRAPH=0: expected on or off");
  EXPECT_EQ(error_of(Variant::cpu_linear, "avx"),
            "variants::Override TF_CPU_LINEAR=avx: expected auto, scalar, avx2 or avx512");
  EXPECT_EQ(variants::current(), before);
}

// A kernel reads the choice in force at each call, not one cached at its first.
TEST(Variants, TheCpuLinearKernelFollowsAnOverride) {
  variants::Override widest(Variant::cpu_linear, "auto");
  const cpu::LinearKernel best = cpu::linear_kernel_in_use();
  {
    variants::Override scalar(Variant::cpu_linear, "scalar");
    EXPECT_EQ(cpu::linear_kernel_in_use(), cpu::LinearKernel::Scalar);
  }
  EXPECT_EQ(cpu::linear_kernel_in_use(), best);
}

TEST(Variants, MarkdownHasARowPerVariantWithItsChoicesAndBytes) {
  const std::string md = variants::markdown();
  const std::string head = "| variable | choices, the default first | what it chooses | the same bytes |\n";
  EXPECT_EQ(md.rfind(head + "|---|---|---|---|\n", 0), 0u) << md;
  EXPECT_NE(md.find("| `TF_CUDA_GRAPH` | `on`, `off` | "), std::string::npos) << md;
  EXPECT_NE(md.find("| `TF_RECURRENCE_LAYOUT` | `32x1`, `16x1`, `16x2` | "), std::string::npos) << md;
  EXPECT_NE(md.find(" | other bytes, within the same contract |\n"), std::string::npos) << md;
  size_t lines = 0;
  for (char c : md) lines += c == '\n';
  EXPECT_EQ(lines, kVariantCount + 2);
}

}  // namespace
}  // namespace tf
