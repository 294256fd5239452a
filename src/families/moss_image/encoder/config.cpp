#include "families/moss_image/encoder/config.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "io/json_file.h"

namespace tf::moss_image {

int64_t EncoderConfig::full_attention_layers() const {
  int64_t n = 0;
  for (bool f : full_attention) n += f;
  return n;
}

EncoderConfig released_encoder_config() {
  EncoderConfig c;
  c.vocab_size = 248320;
  c.hidden = 4096;
  c.intermediate = 12288;
  c.layers = 32;
  c.attn_heads = 16;
  c.kv_heads = 4;
  c.head_dim = 256;
  c.rotary_dim = 64;
  c.rope_theta = 1e7;
  c.lin_key_heads = 16;
  c.lin_value_heads = 32;
  c.lin_key_dim = 128;
  c.lin_value_dim = 128;
  c.conv_kernel = 4;
  c.rms_norm_eps = 1e-6;
  c.max_positions = 262144;
  for (int64_t i = 0; i < c.layers; ++i) c.full_attention.push_back((i + 1) % 4 == 0);
  return c;
}

bool EncoderConfig::is_released_geometry() const {
  EncoderConfig r = released_encoder_config();
  return vocab_size == r.vocab_size && hidden == r.hidden && intermediate == r.intermediate && layers == r.layers &&
         attn_heads == r.attn_heads && kv_heads == r.kv_heads && head_dim == r.head_dim &&
         rotary_dim == r.rotary_dim && rope_theta == r.rope_theta && lin_key_heads == r.lin_key_heads &&
         lin_value_heads == r.lin_value_heads && lin_key_dim == r.lin_key_dim && lin_value_dim == r.lin_value_dim &&
         conv_kernel == r.conv_kernel && rms_norm_eps == r.rms_norm_eps && full_attention == r.full_attention;
}

std::string EncoderConfig::summary() const {
  std::ostringstream o;
  o << layers << " layers (" << full_attention_layers() << " full attention), hidden " << hidden << ", intermediate "
    << intermediate << ", vocab " << vocab_size << "; attention " << attn_heads << "x" << head_dim << " q / "
    << kv_heads << " kv, rope " << rotary_dim << " dims theta " << rope_theta << "; DeltaNet " << lin_key_heads << "x"
    << lin_key_dim << " k / " << lin_value_heads << "x" << lin_value_dim << " v, conv " << conv_kernel << " — "
    << (is_released_geometry() ? "the released Qwen3.5-9B geometry" : "not the released geometry");
  return o.str();
}

namespace {

// Every size is bounded so products of sizes cannot overflow int64.
constexpr int64_t kMaxSize = int64_t(1) << 24;

int64_t bounded(int64_t v, const std::string& key, const std::string& where) {
  if (v < 1 || v > kMaxSize)
    fail(where + ": \"" + key + "\" must be from 1 to " + std::to_string(kMaxSize) + ", found " + std::to_string(v));
  return v;
}

int64_t positive(const Json& j, const std::string& key, const std::string& where) {
  return bounded(json_int(j, key, where), key, where);
}

int64_t positive_or(const Json& j, const std::string& key, int64_t fallback, const std::string& where) {
  return bounded(json_int_or(j, key, fallback, where), key, where);
}

}  // namespace

EncoderConfig load_encoder_config(const std::string& path) {
  Json root = load_json_file(path);
  if (!root.is_object()) fail(path + ": expected a JSON object");
  std::string where = path;
  const Json* j = &root;
  if (root.contains("text_config")) {
    j = &root["text_config"];
    where = path + " text_config";
    if (!j->is_object()) fail(where + ": expected an object");
  }
  std::string model_type = json_string_or(*j, "model_type", json_string_or(root, "model_type", "", path), where);
  if (!model_type.empty() && model_type != "qwen3_5" && model_type != "qwen3_5_text")
    fail(where + ": \"model_type\" is \"" + model_type + "\", expected qwen3_5 or qwen3_5_text");

  EncoderConfig c;
  c.vocab_size = positive(*j, "vocab_size", where);
  c.hidden = positive(*j, "hidden_size", where);
  c.intermediate = positive(*j, "intermediate_size", where);
  c.layers = positive(*j, "num_hidden_layers", where);
  c.attn_heads = positive(*j, "num_attention_heads", where);
  c.kv_heads = positive(*j, "num_key_value_heads", where);
  c.head_dim = positive_or(*j, "head_dim", c.hidden / c.attn_heads, where);
  c.lin_key_heads = positive_or(*j, "linear_num_key_heads", 16, where);
  c.lin_value_heads = positive_or(*j, "linear_num_value_heads", 32, where);
  c.lin_key_dim = positive_or(*j, "linear_key_head_dim", 128, where);
  c.lin_value_dim = positive_or(*j, "linear_value_head_dim", 128, where);
  c.conv_kernel = positive_or(*j, "linear_conv_kernel_dim", 4, where);
  c.rms_norm_eps = json_number_or(*j, "rms_norm_eps", 1e-6, where);
  c.max_positions = positive_or(*j, "max_position_embeddings", 262144, where);
  c.source = path;
  if (!(c.rms_norm_eps >= 0)) fail(where + ": \"rms_norm_eps\" must be non-negative");

  std::string act = json_string_or(*j, "hidden_act", "silu", where);
  if (act != "silu") fail(where + ": \"hidden_act\" is \"" + act + "\"; the kernels implement silu only");
  if (json_bool_or(*j, "attention_bias", false, where))
    fail(where + ": \"attention_bias\" is true; the kernels implement bias-free attention only");

  // Rope: rope_parameters (transformers 5) or the older top-level keys.
  const Json* rope = j->contains("rope_parameters") && (*j)["rope_parameters"].is_object() ? &(*j)["rope_parameters"] : nullptr;
  std::string rope_where = rope ? where + " rope_parameters" : where;
  std::string rope_type = rope ? json_string_or(*rope, "rope_type", "default", rope_where) : "default";
  if (rope_type != "default")
    fail(rope_where + ": \"rope_type\" is \"" + rope_type + "\"; only the default rope is implemented");
  if (rope && rope->contains("rope_theta")) c.rope_theta = json_number(*rope, "rope_theta", rope_where);
  else c.rope_theta = json_number(*j, "rope_theta", where);
  if (!(c.rope_theta > 0)) fail(where + ": \"rope_theta\" must be positive");
  double partial = rope && rope->contains("partial_rotary_factor")
                       ? json_number(*rope, "partial_rotary_factor", rope_where)
                       : json_number_or(*j, "partial_rotary_factor", 0.25, where);
  c.rotary_dim = static_cast<int64_t>(static_cast<double>(c.head_dim) * partial);  // int() as transformers truncates
  if (c.rotary_dim < 2 || c.rotary_dim % 2 || c.rotary_dim > c.head_dim)
    fail(where + ": partial_rotary_factor " + std::to_string(partial) + " of head_dim " + std::to_string(c.head_dim) +
         " gives " + std::to_string(c.rotary_dim) + " rotary dims; need an even number from 2 to head_dim");

  // Layer kinds: layer_types, else full_attention_interval (default 4).
  if (j->contains("layer_types") && !(*j)["layer_types"].is_null()) {
    const Json& lt = (*j)["layer_types"];
    if (!lt.is_array() || static_cast<int64_t>(lt.size()) != c.layers)
      fail(where + ": \"layer_types\" must list " + std::to_string(c.layers) + " layer kinds");
    for (size_t i = 0; i < lt.size(); ++i) {
      std::string k = lt[i].is_string() ? lt[i].get<std::string>() : lt[i].dump();
      if (k == "full_attention") c.full_attention.push_back(true);
      else if (k == "linear_attention") c.full_attention.push_back(false);
      else fail(where + ": \"layer_types\"[" + std::to_string(i) + "] is " + k +
                "; expected full_attention or linear_attention");
    }
  } else {
    int64_t interval = positive_or(*j, "full_attention_interval", 4, where);
    for (int64_t i = 0; i < c.layers; ++i) c.full_attention.push_back((i + 1) % interval == 0);
  }

  // What the kernels need of the geometry.
  if (c.attn_heads % c.kv_heads)
    fail(where + ": num_attention_heads " + std::to_string(c.attn_heads) + " is not a multiple of num_key_value_heads " +
         std::to_string(c.kv_heads) + " (grouped-query attention needs whole groups)");
  if (c.lin_value_heads % c.lin_key_heads)
    fail(where + ": linear_num_value_heads " + std::to_string(c.lin_value_heads) +
         " is not a multiple of linear_num_key_heads " + std::to_string(c.lin_key_heads) +
         " (each key head serves a whole group of value heads)");
  return c;
}

}  // namespace tf::moss_image
