// The reference gate (check/gate/encoder.h) with the encoder on CUDA: the committed tiny cases, and a
// released-geometry case when TF_RELEASED_CASE (and TF_RELEASED_MODEL) name one made on the GPU
// machine by python/cases/moss_image_case.py. The tokenizer has its own tests; here each prompt's
// ids are the case's own, so the gate judges the steps, the repeats and the packing on CUDA.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "check/gate/encoder.h"
#include "core/error.h"
#include "cuda_test_util.h"
#include "families/moss_image/encoder/encoder.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

namespace tf {
namespace {

check::gate::GateReport gate_on_cuda(const std::string& model, const std::string& case_path, const std::string& plant,
                                     std::string* log) {
  LoadOptions o;
  o.device = Device::CUDA;
  o.round_small_params_to_bf16 = check::gate::encoder_case_rounds_small_params(case_path);
  moss_image::Encoder enc = moss_image::Encoder::load(resolve_component(model, "text_encoder"), o);
  auto file = SafetensorsFile::open(case_path);
  auto next = std::make_shared<int>(0);
  check::gate::EncoderGateOptions opt;
  opt.case_path = case_path;
  opt.plant = check::gate::Plant::parse(plant);
  opt.tokenize = [file, next](const std::string&, bool) {
    Tensor ids = file->get("in.p" + std::to_string((*next)++) + ".ids");
    return std::vector<int32_t>(ids.ptr<int32_t>(), ids.ptr<int32_t>() + ids.numel());
  };
  std::ostringstream out;
  check::gate::GateReport rep = check::gate::run_encoder_gate(enc, opt, out);
  *log = out.str();
  return rep;
}

void expect_gate(const std::string& model, const std::string& case_path) {
  if (!path_exists(case_path)) GTEST_SKIP() << case_path << " absent";
  std::string log;
  check::gate::GateReport rep = gate_on_cuda(model, case_path, "", &log);
  std::printf("%s", log.c_str());
  EXPECT_TRUE(rep.passed()) << log;
  check::gate::GateReport planted = gate_on_cuda(model, case_path, "row", &log);
  EXPECT_FALSE(planted.passed()) << "a planted row passed the gate on CUDA";
}

const std::string data = TF_TEST_DATA;

TEST(CudaGate, TinyDefaultCase) {
  TF_REQUIRE_CUDA_GPU();
  expect_gate(data + "/tiny-pipeline", data + "/moss-image-cases/tiny-default.safetensors");
}

TEST(CudaGate, TinyBStoredF32ParamsCase) {
  TF_REQUIRE_CUDA_GPU();
  expect_gate(data + "/moss-tiny-b", data + "/moss-image-cases/tiny-b-f32-params.safetensors");
}

TEST(CudaGate, ReleasedGeometryCase) {
  const char* c = std::getenv("TF_RELEASED_CASE");
  const char* m = std::getenv("TF_RELEASED_MODEL");
  if (!c || !m) GTEST_SKIP() << "TF_RELEASED_CASE / TF_RELEASED_MODEL not set";
  TF_REQUIRE_CUDA_GPU();
  expect_gate(m, c);
}

}  // namespace
}  // namespace tf
