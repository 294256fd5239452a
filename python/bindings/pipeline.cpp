// tensorfold.MossImagePipeline's engine: tf::pipelines::MossImagePipeline, as `tf-moss-image generate`
// runs it (the same request checks, the same bytes); Ctrl-C and a step callback between steps.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cmath>
#include <memory>

#include "device.h"
#include "errors.h"
#include "module.h"
#include "pipelines/moss_image/pipeline.h"
#include "tensors.h"
#include "text/utf8.h"

namespace tfpy {

namespace {

class MossImagePipeline {
 public:
  MossImagePipeline(const std::string& path, const std::string& device, double max_memory)
      : device_(device_from(device)), pipe_(loading([&] {
          tf::pipelines::PipelineOptions o;
          o.device = device_;
          o.max_memory_bytes = max_memory * 1024.0 * 1024.0 * 1024.0;
          return std::make_unique<tf::pipelines::MossImagePipeline>(tf::pipelines::MossImagePipeline::load(path, o));
        })) {}

  // (picture U8 [H, W, 3], latents F32 [C, H/16, W/16]). `callback(step, steps, latents)` runs after
  // each step with the GIL held; an exception it raises stops the run and is re-raised.
  std::tuple<nb::object, nb::object> generate(const std::string& prompt, const std::string& negative, int64_t width,
                                              int64_t height, int64_t steps, double guidance,
                                              std::optional<double> shift, uint64_t seed,
                                              std::optional<nb::callable> callback, const std::string& output) const {
    const Framework f = framework_from(output);
    tf::pipelines::GenerateRequest r;
    for (auto [name, text] : {std::pair<const char*, const std::string*>{"prompt", &prompt}, {"negative_prompt", &negative}}) {
      try {
        tf::text::require_valid_utf8(*text, name);
      } catch (const tf::Error& e) {
        throw BadInput(e.what());
      }
    }
    r.prompt = prompt, r.negative = negative, r.width = width, r.height = height, r.steps = steps;
    r.guidance = guidance, r.shift = shift, r.seed = seed;
    try {
      pipe_->check(r);
    } catch (const tf::OutOfMemory&) {
      throw;
    } catch (const tf::Error& e) {
      const std::string m = e.what();
      if (m.find("needs an estimated") != std::string::npos) throw tf::OutOfMemory(m);
      throw BadInput(m);
    }
    const Framework lf = f;
    const tf::pipelines::StepCallback on_step = [&](int64_t i, int64_t n, const tf::Tensor& x) {
      nb::gil_scoped_acquire held;
      if (PyErr_CheckSignals() != 0) throw Interrupted{};
      if (callback) {
        try {
          (*callback)(i, n, to_python(x, lf));
        } catch (nb::python_error& e) {
          e.restore();  // pending again on this thread, re-raised once the GIL is back
          throw Interrupted{};
        }
      }
    };
    const tf::pipelines::Generated g = released([&] {
      const auto checks = signal_checks();
      return pipe_->generate(r, [&](const std::string&) { return checks; }, on_step);
    });
    tf::Tensor pic = tf::empty(tf::DType::U8, {g.picture.height, g.picture.width, 3});
    std::copy(g.picture.rgb.begin(), g.picture.rgb.end(), pic.ptr<uint8_t>());
    return {to_python(pic, f), to_python(g.latents, f)};
  }

  std::string summary() const {
    const auto& fo = pipe_->folder();
    return fo.transformer_config.summary() + "; " + fo.vae_config.summary();
  }

 private:
  tf::Device device_;
  std::unique_ptr<tf::pipelines::MossImagePipeline> pipe_;
};

}  // namespace

void register_pipeline(nb::module_& m) {
  nb::class_<MossImagePipeline>(m, "MossImagePipeline")
      .def(nb::init<const std::string&, const std::string&, double>(), nb::arg("path"), nb::arg("device") = "cpu",
           nb::arg("max_memory") = 0.0)
      .def("generate", &MossImagePipeline::generate, nb::arg("prompt"), nb::arg("negative_prompt") = "",
           nb::arg("width") = 1024, nb::arg("height") = 1024, nb::arg("steps") = 50, nb::arg("guidance") = 3.0,
           nb::arg("shift") = nb::none(), nb::arg("seed") = 0, nb::arg("callback") = nb::none(),
           nb::arg("output") = "torch")
      .def_prop_ro("summary", &MossImagePipeline::summary);
}

}  // namespace tfpy
