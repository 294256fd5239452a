// tensorfold.VAE's engine: tf::flux2_vae::Vae over a batch, as `tf-flux2-vae encode`/`decode` run it
// (the memory estimate's refusal before any work), and the picture conversions the programs use.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

#include "device.h"
#include "errors.h"
#include "families/flux2_vae/memory.h"
#include "families/flux2_vae/model.h"
#include "families/flux2_vae/pixels.h"
#include "module.h"
#include "tensors.h"

namespace tfpy {

namespace {

namespace vae = tf::flux2_vae;

// [B, ...] from B equal tensors, on their device (one tensor: a view of it, no copy).
tf::Tensor stack(const std::vector<tf::Tensor>& items) {
  if (items.size() == 1 && items[0].storage) {
    tf::Tensor t = items[0];
    t.shape.insert(t.shape.begin(), 1);
    return t;
  }
  tf::Shape s{static_cast<int64_t>(items.size())};
  s.insert(s.end(), items.at(0).shape.begin(), items.at(0).shape.end());
  tf::Tensor out = tf::empty(items[0].dtype, s, items[0].device);
  for (size_t b = 0; b < items.size(); ++b) {
    tf::Tensor dst = item(out, static_cast<int64_t>(b));
    tf::copy_into(dst, items[b]);
  }
  return out;
}

class Vae {
 public:
  Vae(const std::string& path, const std::string& device)
      : vae_(released([&] { return loading([&] { return vae::Vae::load(path, device_from(device)); }); })) {}

  // images F32 [B, 3, H, W] -> moments F32 [B, 2 Cz, H/8, W/8] (diffusers' latent_dist parameters).
  // GPU images give GPU outputs (computed from the images in place; the small results cross back).
  nb::object moments(const Input& images, double max_memory, const std::string& output, uintptr_t stream) const {
    const Framework f = framework_from(output);
    const tf::Tensor x = pictures(images, "images");
    const bool gpu = x.device == tf::Device::CUDA;
    require(vae::Direction::Encode, x.dim(3), x.dim(2), max_memory, "images");
    const tf::Tensor m = released([&] {
      return on_caller_stream(gpu, stream, [&] {
        std::vector<tf::Tensor> out;
        for (int64_t b = 0; b < x.dim(0); ++b) out.push_back(vae_.moments(item(x, b), signal_checks()));
        return tf::to_device(stack(out), x.device);
      });
    });
    return to_python(m, f, stream);
  }

  // images F32 [B, 3, H, W], noise F32 [B, Cz, H/8, W/8] or None (the posterior mean) ->
  // (latents F32 [B, Cz, H/8, W/8], feature2 F32 [B, 5 + H W / 256, 4 Cz]).
  std::tuple<nb::object, nb::object> encode(const Input& images, const std::optional<Input>& noise,
                                            double max_memory, const std::string& output, uintptr_t stream) const {
    const Framework f = framework_from(output);
    const tf::Tensor x = pictures(images, "images");
    const bool gpu = x.device == tf::Device::CUDA;
    const int64_t d = vae_.config().downscale();
    tf::Tensor n;
    if (noise) {
      n = borrow(*noise, "noise", tf::DType::F32, 4, vae_.device());
      const tf::Shape want{x.dim(0), vae_.config().latent_channels, x.dim(2) / d, x.dim(3) / d};
      if (n.shape != want)
        throw BadInput("noise: shape " + tf::shape_str(n.shape) + ", expected " + tf::shape_str(want) +
                       " (images, latent channels, H/" + std::to_string(d) + ", W/" + std::to_string(d) + ")");
    }
    require(vae::Direction::Encode, x.dim(3), x.dim(2), max_memory, "images");
    std::vector<tf::Tensor> latents, feature2;
    released([&] {
      return on_caller_stream(gpu, stream, [&] {
        for (int64_t b = 0; b < x.dim(0); ++b) {
          const tf::Tensor nb_ = noise ? tf::to_device(item(n, b), tf::Device::CPU) : tf::Tensor{};
          vae::Encoded e = vae_.encode(item(x, b), noise ? &nb_ : nullptr, signal_checks());
          latents.push_back(e.latents);
          feature2.push_back(e.feature2);
        }
        latents = {tf::to_device(stack(latents), x.device)};
        feature2 = {tf::to_device(stack(feature2), x.device)};
        return 0;
      });
    });
    return {to_python(latents[0], f, stream), to_python(feature2[0], f, stream)};
  }

  // latents F32 [B, Cz, h, w] -> pictures F32 [B, 3, 8h, 8w] in [-1, 1] (not clamped, as diffusers).
  // GPU latents give GPU pictures, decoded in place and left there (not scanned for non-finite values).
  nb::object decode(const Input& latents, double max_memory, const std::string& output, uintptr_t stream) const {
    const Framework f = framework_from(output);
    const tf::Tensor z = borrow(latents, "latents", tf::DType::F32, 4, vae_.device());
    const bool gpu = z.device == tf::Device::CUDA;
    const auto& c = vae_.config();
    const int64_t d = c.downscale();
    if (z.dim(0) < 1 || z.dim(1) != c.latent_channels || z.dim(2) < 1 || z.dim(3) < 1)
      throw BadInput("latents: shape " + tf::shape_str(z.shape) + ", expected [B, " + std::to_string(c.latent_channels) +
                     ", H/" + std::to_string(d) + ", W/" + std::to_string(d) + "]");
    if (z.dim(2) * d > tf::kMaxPngSide || z.dim(3) * d > tf::kMaxPngSide)
      throw BadInput("latents: shape " + tf::shape_str(z.shape) + " decodes to a picture wider than " +
                     std::to_string(tf::kMaxPngSide) + " on a side");
    require(vae::Direction::Decode, z.dim(3) * d, z.dim(2) * d, max_memory, "latents");
    const tf::Tensor pics = released([&] {
      return on_caller_stream(gpu, stream, [&] {
        std::vector<tf::Tensor> out;
        for (int64_t b = 0; b < z.dim(0); ++b)
          out.push_back(gpu ? vae_.decode_on_device(item(z, b), signal_checks()) : vae_.decode(item(z, b), signal_checks()));
        return stack(out);
      });
    });
    return to_python(pics, f, stream);
  }

  nb::dict config() const {
    const auto& c = vae_.config();
    nb::dict d;
    d["latent_channels"] = c.latent_channels;
    d["downscale"] = c.downscale();
    d["picture_multiple"] = c.picture_multiple();
    d["token_width"] = c.token_width();
    d["batch_norm_eps"] = c.batch_norm_eps;
    d["bn_mean"] = vae_.weights().bn_mean;
    d["bn_var"] = vae_.weights().bn_var;
    d["summary"] = c.summary();
    return d;
  }

 private:
  // images F32 [B, 3, H, W], sides positive multiples of the picture multiple.
  tf::Tensor pictures(const Input& a, const std::string& name) const {
    tf::Tensor x = borrow(a, name, tf::DType::F32, 4, vae_.device());
    const int64_t m = vae_.config().picture_multiple();
    if (x.dim(0) < 1 || x.dim(1) != 3 || x.dim(2) < m || x.dim(3) < m || x.dim(2) % m || x.dim(3) % m)
      throw BadInput(name + ": shape " + tf::shape_str(x.shape) + ", expected [B, 3, H, W] with B >= 1 and H, W positive multiples of " +
                     std::to_string(m));
    if (x.dim(2) > tf::kMaxPngSide || x.dim(3) > tf::kMaxPngSide)
      throw BadInput(name + ": shape " + tf::shape_str(x.shape) + ": each side must be at most " + std::to_string(tf::kMaxPngSide));
    return x;
  }

  void require(vae::Direction dir, int64_t width, int64_t height, double gib, const std::string& what) const {
    const tf::AvailableMemory have = memory_limit(vae_.device(), gib);
    memory_refusal([&] { vae::require_memory_for(dir, vae_.config(), width, height, vae_.device(), have, what); });
  }

  vae::Vae vae_;
};

// 8-bit RGB pictures (bytes [H, W, 3] each, as PIL's tobytes()) -> F32 [B, 3, H, W] in the VAE's
// range, exactly as the programs read a PNG.
nb::object pictures_to_input(const std::vector<std::tuple<nb::bytes, int64_t, int64_t>>& pics, int64_t multiple,
                             const std::string& output) {
  const Framework f = framework_from(output);
  if (pics.empty()) throw BadInput("images: expected at least one picture");
  std::vector<tf::Tensor> xs;
  for (size_t k = 0; k < pics.size(); ++k) {
    const auto& [bytes, width, height] = pics[k];
    const std::string name = "images[" + std::to_string(k) + "]";
    if (width <= 0 || height <= 0 || width > tf::kMaxPngSide || height > tf::kMaxPngSide ||
        bytes.size() != static_cast<size_t>(width * height * 3))
      throw BadInput(name + ": " + std::to_string(bytes.size()) + " bytes for a " + std::to_string(width) + "x" +
                     std::to_string(height) + " RGB picture");
    tf::RgbImage img;
    img.width = width;
    img.height = height;
    img.rgb.assign(static_cast<const uint8_t*>(bytes.data()), static_cast<const uint8_t*>(bytes.data()) + bytes.size());
    try {
      xs.push_back(vae::picture_to_input(img, multiple, name));
    } catch (const tf::Error& e) {
      throw BadInput(e.what());
    }
    if (xs.back().shape != xs.front().shape)
      throw BadInput(name + ": " + std::to_string(width) + "x" + std::to_string(height) + ", unlike images[0]");
  }
  return to_python(stack(xs), f);
}

// A picture F32 [3, H, W] -> (bytes [H, W, 3] 8-bit RGB, width, height), as the programs write a PNG.
std::tuple<nb::bytes, int64_t, int64_t> output_to_picture(const Input& picture) {
  const tf::Tensor x = borrow(picture, "picture", tf::DType::F32, 3);
  if (x.dim(0) != 3) throw BadInput("picture: shape " + tf::shape_str(x.shape) + ", expected [3, H, W]");
  const tf::RgbImage img = vae::output_to_picture(x);
  return {nb::bytes(img.rgb.data(), img.rgb.size()), img.width, img.height};
}

}  // namespace

void register_vae(nb::module_& m) {
  nb::class_<Vae>(m, "Vae")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("path"), nb::arg("device") = "cpu")
      .def("moments", &Vae::moments, nb::arg("images"), nb::arg("max_memory") = 0.0, nb::arg("output") = "torch",
           nb::arg("stream") = 0)
      .def("encode", &Vae::encode, nb::arg("images"), nb::arg("noise").none() = nb::none(), nb::arg("max_memory") = 0.0,
           nb::arg("output") = "torch", nb::arg("stream") = 0)
      .def("decode", &Vae::decode, nb::arg("latents"), nb::arg("max_memory") = 0.0, nb::arg("output") = "torch",
           nb::arg("stream") = 0)
      .def_prop_ro("config", &Vae::config);
  m.def("pictures_to_input", &pictures_to_input, nb::arg("pictures"), nb::arg("multiple"), nb::arg("output") = "torch");
  m.def("output_to_picture", &output_to_picture, nb::arg("picture"));
}

}  // namespace tfpy
