#include "families/flux2_vae/config.h"

#include <sstream>

#include "core/error.h"
#include "io/json_file.h"

namespace tf::flux2_vae {

namespace {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

void check_block_types(const Json& j, const char* key, const char* want, size_t n, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return;
  const Json& v = j.at(key);
  require(v.is_array() && v.size() == n,
          where + ": \"" + key + "\" must list " + std::to_string(n) + " blocks (one per width)");
  for (const Json& e : v)
    require(e.is_string() && e.get<std::string>() == want,
            where + ": \"" + key + "\" holds " + e.dump() + ", only " + want + " is supported");
}

}  // namespace

bool Config::is_released_geometry() const {
  const std::vector<int64_t> flux2{128, 256, 512, 512}, moss_small{96, 192, 384, 384};
  return in_channels == 3 && out_channels == 3 && block_out_channels == flux2 &&
         (decoder_widths() == flux2 || decoder_widths() == moss_small) &&
         layers_per_block == 2 && latent_channels == 32 && norm_num_groups == 32 && use_quant_conv &&
         use_post_quant_conv && mid_block_add_attention && patch == 2;
}

std::string Config::summary() const {
  std::ostringstream s;
  s << "FLUX.2 VAE: widths " << list_str(block_out_channels) << ", decoder " << list_str(decoder_widths())
    << ", " << latent_channels << " latent channels, " << norm_num_groups << " groups"
    << (!is_released_geometry()                              ? " (not the released geometry)"
        : decoder_widths() == block_out_channels ? " (the released geometry)"
                                                 : " (the released geometry, MOSS-Image's small decoder)");
  return s.str();
}

void validate(const Config& c, const std::string& where) {
  require(!c.block_out_channels.empty(), where + ": \"block_out_channels\" is empty");
  require(c.decoder_widths().size() == c.block_out_channels.size(),
          where + ": \"decoder_block_out_channels\" " + list_str(c.decoder_widths()) +
              " must have as many stages as \"block_out_channels\" " + list_str(c.block_out_channels));
  require(c.in_channels >= 1 && c.out_channels >= 1 && c.latent_channels >= 1 && c.layers_per_block >= 1,
          where + ": channel counts and \"layers_per_block\" must be >= 1");
  require(c.norm_num_groups >= 1, where + ": \"norm_num_groups\" must be >= 1");
  for (const auto* widths : {&c.block_out_channels, &c.decoder_block_out_channels})
    for (int64_t w : *widths)
      require(w >= 1 && w % c.norm_num_groups == 0,
              where + ": width " + std::to_string(w) + " is not a multiple of \"norm_num_groups\" " +
                  std::to_string(c.norm_num_groups));
  require(c.batch_norm_eps >= 0, where + ": \"batch_norm_eps\" must be >= 0");
}

Config load_config(const std::string& component_dir) {
  const std::string path = component_dir + "/config.json";
  const Json j = load_json_file(path);
  Config c;
  const std::string cls = json_string_or(j, "_class_name", "AutoencoderKLFlux2", path);
  require(cls == "AutoencoderKLFlux2", path + ": \"_class_name\" is \"" + cls + "\", expected AutoencoderKLFlux2");
  c.in_channels = json_int_or(j, "in_channels", c.in_channels, path);
  c.out_channels = json_int_or(j, "out_channels", c.out_channels, path);
  if (j.contains("block_out_channels")) c.block_out_channels = json_int_list(j, "block_out_channels", path);
  if (j.contains("decoder_block_out_channels") && !j.at("decoder_block_out_channels").is_null())
    c.decoder_block_out_channels = json_int_list(j, "decoder_block_out_channels", path);
  c.layers_per_block = json_int_or(j, "layers_per_block", c.layers_per_block, path);
  c.latent_channels = json_int_or(j, "latent_channels", c.latent_channels, path);
  c.norm_num_groups = json_int_or(j, "norm_num_groups", c.norm_num_groups, path);
  c.use_quant_conv = json_bool_or(j, "use_quant_conv", c.use_quant_conv, path);
  c.use_post_quant_conv = json_bool_or(j, "use_post_quant_conv", c.use_post_quant_conv, path);
  c.mid_block_add_attention = json_bool_or(j, "mid_block_add_attention", c.mid_block_add_attention, path);
  c.batch_norm_eps = json_number_or(j, "batch_norm_eps", c.batch_norm_eps, path);
  const std::string act = json_string_or(j, "act_fn", "silu", path);
  require(act == "silu", path + ": \"act_fn\" is \"" + act + "\", only silu is supported");
  if (j.contains("patch_size")) {
    const auto p = json_int_list(j, "patch_size", path);
    require(p.size() == 2 && p[0] == 2 && p[1] == 2,
            path + ": \"patch_size\" must be [2, 2] (FLUX.2's 2x2 patches)");
  }
  const size_t n = c.block_out_channels.size();
  check_block_types(j, "down_block_types", "DownEncoderBlock2D", n, path);
  check_block_types(j, "up_block_types", "UpDecoderBlock2D", n, path);
  validate(c, path);
  return c;
}

}  // namespace tf::flux2_vae
