#pragma once
// The one case format of the stepwise reference gate, written by python/cases/case_writer.py:
// a safetensors file whose metadata holds
//   kind       "tensorfold.case"
//   component  which component it is for: "moss_image.encoder", "flux2_vae", ...
//   steps      a JSON array of step names, in run order
//   reference  a JSON object of the reference libraries' versions ({"torch": "2.15.0", ...})
//   + the component's own keys (the encoder's prompts, small_params, hidden, layers; the VAE's geometry)
// and tensors
//   in.<name>     the run's inputs
//   f32.<step>    the float32 (float64 for the VAE) reference's output of each step; a step's input
//                 is the previous step's f32 output or a named input, as the component defines
//   bf16.<step>   torch bf16's output of the step alone on bf16(its f32 input); optional
//   whole.<name>  whole-run outputs (printed distances, the VAE's decoded picture)
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/json_file.h"

namespace tf {
class SafetensorsFile;
}

namespace tf::check::gate {

inline constexpr const char* kCaseKind = "tensorfold.case";

// A shape as a case tensor must have: -1 stands for any size of at least one.
struct Expected {
  std::vector<DType> dtypes;
  Shape shape;
  std::string shape_text;  // how the shape reads in errors ("[n]", "[H, W, 3]"); shape_str(shape) when empty
  std::string why;         // where the shape comes from ("this model's enc.mid"); may be empty
};

class Case {
 public:
  // Opens `path` and checks kind, component, steps (distinct non-empty names) and reference.
  static Case open(const std::string& path, const std::string& component);

  const std::string& path() const { return path_; }
  const std::string& component() const { return component_; }
  const std::vector<std::string>& steps() const { return steps_; }
  bool has_step(const std::string& step) const;
  std::string reference() const;  // "diffusers 0.42.1, torch 2.15.0"

  // A required metadata key, as text or parsed as JSON; errors name the file and the key.
  std::string meta(const std::string& key) const;
  bool has_meta(const std::string& key) const;
  Json meta_json(const std::string& key) const;

  bool has(const std::string& tensor) const;
  // A tensor as `expected` says; errors name the file, the tensor and what was expected.
  Tensor tensor(const std::string& name, const Expected& expected) const;
  Tensor input(const std::string& name, const Expected& expected) const { return tensor("in." + name, expected); }
  Tensor whole(const std::string& name, const Expected& expected) const { return tensor("whole." + name, expected); }
  // f32.<step>: F32 or F64 of `shape`.
  Tensor reference_output(const std::string& step, const Shape& shape, const std::string& why) const;
  // bf16.<step>: BF16 of `shape`, or nothing when the case has none.
  std::optional<Tensor> torch_bf16(const std::string& step, const Shape& shape, const std::string& why) const;

 private:
  std::shared_ptr<SafetensorsFile> file_;
  std::string path_, component_;
  std::vector<std::string> steps_;
  Json reference_;
};

}  // namespace tf::check::gate
