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

// [B, ...] from B equal tensors.
tf::Tensor stack(const std::vector<tf::Tensor>& items) {
  tf::Shape s{static_cast<int64_t>(items.size())};
  s.insert(s.end(), items.at(0).shape.begin(), items.at(0).shape.end());
  tf::Tensor out = tf::empty(items[0].dtype, s);
  for (size_t b = 0; b < items.size(); ++b) {
    tf::Tensor dst = item(out, static_cast<int64_t>(b));
    std::memcpy(dst.data, items[b].data, items[b].nbytes());
  }
  return out;
}

class Vae {
 public:
  Vae(const std::string& path, const std::string& device)
      : vae_(released([&] { return loading([&] { return vae::Vae::load(path, device_from(device)); }); })) {}

  // images F32 [B, 3, H, W] -> moments F32 [B, 2 Cz, H/8, W/8] (diffusers' latent_dist parameters).
  nb::object moments(const Input& images, double max_memory, const std::string& output) const {
    const Framework f = framework_from(output);
    const tf::Tensor x = pictures(images, "images");
    require(vae::Direction::Encode, x.dim(3), x.dim(2), max_memory, "images");
    return to_python(stack(released([&] {
                       std::vector<tf::Tensor> out;
                       for (int64_t b = 0; b < x.dim(0); ++b) out.push_back(vae_.moments(item(x, b), signal_checks()));
                       return out;
                     })),
                     f);
  }

  // images F32 [B, 3, H, W], noise F32 [B, Cz, H/8, W/8] or None (the posterior mean) ->
  // (latents F32 [B, Cz, H/8, W/8], feature2 F32 [B, 5 + H W / 256, 4 Cz]).
  std::tuple<nb::object, nb::object> encode(const Input& images, const std::optional<Input>& noise,
                                            double max_memory, const std::string& output) const {
    const Framework f = framework_from(output);
    const tf::Tensor x = pictures(images, "images");
    const int64_t d = vae_.config().downscale();
    tf::Tensor n;
    if (noise) {
      n = borrow(*noise, "noise", tf::DType::F32, 4);
      const tf::Shape want{x.dim(0), vae_.config().latent_channels, x.dim(2) / d, x.dim(3) / d};
      if (n.shape != want)
        throw BadInput("noise: shape " + tf::shape_str(n.shape) + ", expected " + tf::shape_str(want) +
                       " (images, latent channels, H/" + std::to_string(d) + ", W/" + std::to_string(d) + ")");
    }
    require(vae::Direction::Encode, x.dim(3), x.dim(2), max_memory, "images");
    std::vector<tf::Tensor> latents, feature2;
    released([&] {
      for (int64_t b = 0; b < x.dim(0); ++b) {
        const tf::Tensor nb_ = noise ? item(n, b) : tf::Tensor{};
        vae::Encoded e = vae_.encode(item(x, b), noise ? &nb_ : nullptr, signal_checks());
        latents.push_back(e.latents);
        feature2.push_back(e.feature2);
      }
      return 0;
    });
    return {to_python(stack(latents), f), to_python(stack(feature2), f)};
  }

  // latents F32 [B, Cz, h, w] -> pictures F32 [B, 3, 8h, 8w] in [-1, 1] (not clamped, as diffusers).
  nb::object decode(const Input& latents, double max_memory, const std::string& output) const {
    const Framework f = framework_from(output);
    const tf::Tensor z = borrow(latents, "latents", tf::DType::F32, 4);
    const auto& c = vae_.config();
    const int64_t d = c.downscale();
    if (z.dim(0) < 1 || z.dim(1) != c.latent_channels || z.dim(2) < 1 || z.dim(3) < 1)
      throw BadInput("latents: shape " + tf::shape_str(z.shape) + ", expected [B, " + std::to_string(c.latent_channels) +
                     ", H/" + std::to_string(d) + ", W/" + std::to_string(d) + "]");
    if (z.dim(2) * d > tf::kMaxPngSide || z.dim(3) * d > tf::kMaxPngSide)
      throw BadInput("latents: shape " + tf::shape_str(z.shape) + " decodes to a picture wider than " +
                     std::to_string(tf::kMaxPngSide) + " on a side");
    require(vae::Direction::Decode, z.dim(3) * d, z.dim(2) * d, max_memory, "latents");
    return to_python(stack(released([&] {
                       std::vector<tf::Tensor> out;
                       for (int64_t b = 0; b < z.dim(0); ++b) out.push_back(vae_.decode(item(z, b), signal_checks()));
                       return out;
                     })),
                     f);
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
    tf::Tensor x = borrow(a, name, tf::DType::F32, 4);
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
      .def("moments", &Vae::moments, nb::arg("images"), nb::arg("max_memory") = 0.0, nb::arg("output") = "torch")
      .def("encode", &Vae::encode, nb::arg("images"), nb::arg("noise").none() = nb::none(), nb::arg("max_memory") = 0.0,
           nb::arg("output") = "torch")
      .def("decode", &Vae::decode, nb::arg("latents"), nb::arg("max_memory") = 0.0, nb::arg("output") = "torch")
      .def_prop_ro("config", &Vae::config);
  m.def("pictures_to_input", &pictures_to_input, nb::arg("pictures"), nb::arg("multiple"), nb::arg("output") = "torch");
  m.def("output_to_picture", &output_to_picture, nb::arg("picture"));
}

}  // namespace tfpy
