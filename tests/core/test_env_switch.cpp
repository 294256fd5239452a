#include "core/env_switch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace {

TEST(EnvSwitch, UnsetGivesTheFirstChoiceAndAListedValueItself) {
  unsetenv("TF_TEST_SWITCH");
  EXPECT_EQ(tf::env_switch("TF_TEST_SWITCH", {"auto", "cublaslt"}), "auto");
  setenv("TF_TEST_SWITCH", "", 1);
  EXPECT_EQ(tf::env_switch("TF_TEST_SWITCH", {"auto", "cublaslt"}), "auto");
  setenv("TF_TEST_SWITCH", "cublaslt", 1);
  EXPECT_EQ(tf::env_switch("TF_TEST_SWITCH", {"auto", "cublaslt"}), "cublaslt");
  unsetenv("TF_TEST_SWITCH");
}

TEST(EnvSwitch, AnotherValueIsAnErrorNamingTheVariableAndTheChoices) {
  setenv("TF_TEST_SWITCH", "cuBLASLt", 1);
  try {
    tf::env_switch("TF_TEST_SWITCH", {"auto", "recurrent", "cublaslt"});
    FAIL() << "no error";
  } catch (const tf::Error& e) {
    EXPECT_EQ(std::string(e.what()), "TF_TEST_SWITCH=cuBLASLt: expected auto, recurrent or cublaslt");
  }
  unsetenv("TF_TEST_SWITCH");
}

}  // namespace
