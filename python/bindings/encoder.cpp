// tensorfold.PromptEncoder's engine: tf::moss_image::PromptEncoder, as `tf-moss-image encode` runs
// it (all prompts packed in one pass, the memory estimate's refusal before the forward).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "device.h"
#include "errors.h"
#include "families/moss_image/encoder/memory.h"
#include "families/moss_image/encoder/prompt_encoder.h"
#include "module.h"
#include "tensors.h"
#include "text/utf8.h"

namespace tfpy {

namespace {

class PromptEncoder {
 public:
  PromptEncoder(const std::string& path, const std::string& device)
      : device_(device_from(device)),
        enc_(released([&] {
          return loading([&] {
            return std::make_unique<tf::moss_image::PromptEncoder>(tf::moss_image::PromptEncoder::load(path, {device_, true}));
          });
        })) {}

  // Each prompt's (ids I32 [n], rows BF16 [n, hidden]), the same bytes as the program writes.
  // rows_device "cuda" (an encoder on CUDA only) leaves the rows there, ordered before `stream`'s later work.
  std::vector<std::tuple<nb::object, nb::object>> encode(const std::vector<std::string>& prompts, double max_memory,
                                                          const std::string& output, const std::string& rows_device,
                                                          uintptr_t stream) const {
    const Framework f = framework_from(output);
    if (rows_device != "cpu" && rows_device != "cuda")
      throw BadInput("rows_device: expected 'cpu' or 'cuda', got '" + rows_device + "'");
    const bool gpu = rows_device == "cuda";
    if (gpu && device_ != tf::Device::CUDA)
      throw BadInput("rows_device='cuda': this encoder computes on the CPU (load it with device='cuda')");
    if (gpu && f == Framework::NumPy) throw BadInput("output='numpy': numpy cannot hold GPU memory (use 'torch' or 'dlpack')");
    if (prompts.empty()) throw BadInput("prompts: expected at least one prompt");
    for (size_t k = 0; k < prompts.size(); ++k) {
      try {
        tf::text::require_valid_utf8(prompts[k], "prompt " + std::to_string(k + 1));
      } catch (const tf::Error& e) {
        throw BadInput(e.what());
      }
    }
    const tf::AvailableMemory have = memory_limit(device_, max_memory);
    auto encoded = released([&] {
      return on_caller_stream(gpu, stream, [&] {
        return enc_->encode(
            prompts, signal_checks(),
            [&](int64_t tokens) {
              memory_refusal([&] {
                tf::moss_image::require_memory_for_tokens(enc_->encoder().config(), tokens, have, "prompts");
              });
            },
            gpu ? tf::Device::CUDA : tf::Device::CPU);
      });
    });
    std::vector<std::tuple<nb::object, nb::object>> out;
    for (auto& e : encoded) {
      tf::Tensor ids = tf::empty(tf::DType::I32, {static_cast<int64_t>(e.ids.size())});
      std::copy(e.ids.begin(), e.ids.end(), ids.ptr<int32_t>());
      out.emplace_back(to_python(ids, f), to_python(e.rows, f, stream));
    }
    return out;
  }

  std::vector<int32_t> tokenize(const std::string& prompt, bool chat) const { return enc_->tokenize(prompt, chat); }
  std::string summary() const { return enc_->encoder().config().summary(); }
  int64_t hidden() const { return enc_->encoder().config().hidden; }

 private:
  tf::Device device_;
  std::unique_ptr<tf::moss_image::PromptEncoder> enc_;
};

}  // namespace

void register_encoder(nb::module_& m) {
  nb::class_<PromptEncoder>(m, "PromptEncoder")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("path"), nb::arg("device") = "cpu")
      .def("encode", &PromptEncoder::encode, nb::arg("prompts"), nb::arg("max_memory") = 0.0,
           nb::arg("output") = "torch", nb::arg("rows_device") = "cpu", nb::arg("stream") = 0)
      .def("tokenize", &PromptEncoder::tokenize, nb::arg("prompt"), nb::arg("chat") = true)
      .def_prop_ro("summary", &PromptEncoder::summary)
      .def_prop_ro("hidden", &PromptEncoder::hidden);
}

}  // namespace tfpy
