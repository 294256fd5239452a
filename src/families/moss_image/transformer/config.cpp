#include "families/moss_image/transformer/config.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "io/checkpoint.h"
#include "io/json_file.h"

namespace tf::moss_image {

namespace {

// Each size is capped so that products of sizes stay far inside int64 and the caps name a model
// tens of times larger than the release; a bigger value is a broken config, not a model.
struct SizeKey {
  const char* key;
  int64_t TransformerConfig::*field;
  int64_t max;
  int64_t released;
};
constexpr SizeKey kSizes[] = {
    {"dim", &TransformerConfig::dim, int64_t{1} << 16, 3072},
    {"num_layers", &TransformerConfig::layers, 1024, 42},
    {"num_heads", &TransformerConfig::heads, 1024, 24},
    {"ffn_dim", &TransformerConfig::ffn_dim, int64_t{1} << 18, 8192},
    {"text_dim", &TransformerConfig::text_dim, int64_t{1} << 16, 4096},
    {"latent_channels", &TransformerConfig::latent_channels, int64_t{1} << 12, 128},
    {"freq_dim", &TransformerConfig::freq_dim, int64_t{1} << 14, 256},
};
// The CUDA attention kernel holds head dims up to 256 (backend/cuda/kernels/attention).
constexpr int64_t kMaxHeadDim = 256;
constexpr double kMaxRopeBase = 1e12;

std::string num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

}  // namespace

TransformerConfig TransformerConfig::released() {
  TransformerConfig c;
  c.dim = 3072;
  c.layers = 42;
  c.heads = 24;
  c.ffn_dim = 8192;
  c.text_dim = 4096;
  c.latent_channels = 128;
  c.freq_dim = 256;
  c.rope_base = 1e4;
  c.source = "the released geometry";
  finish_transformer_config(c, c.source);
  return c;
}

bool TransformerConfig::is_released_geometry() const {
  const TransformerConfig r = released();
  return dim == r.dim && layers == r.layers && heads == r.heads && head_dim == r.head_dim && ffn_dim == r.ffn_dim &&
         text_dim == r.text_dim && latent_channels == r.latent_channels && freq_dim == r.freq_dim &&
         rope_base == r.rope_base && text_blocks == r.text_blocks && rope_axes == r.rope_axes &&
         rope_bands == r.rope_bands && eps == r.eps;
}

std::string TransformerConfig::summary() const {
  std::ostringstream o;
  o << "MOSS-Image transformer: " << layers << " joint blocks + " << text_blocks << " text blocks, dim " << dim << " ("
    << heads << " heads of " << head_dim << "), ffn " << ffn_dim << ", text " << text_dim << ", " << latent_channels
    << " latent channels, freq " << freq_dim << ", rope base " << num(rope_base) << " (" << rope_axes << " axes of "
    << rope_bands << " bands) — " << (is_released_geometry() ? "the released geometry" : "not the released geometry");
  return o.str();
}

void finish_transformer_config(TransformerConfig& c, const std::string& where) {
  for (const SizeKey& s : kSizes) {
    const int64_t v = c.*(s.field);
    if (v < 1) fail(where + ": \"" + s.key + "\" is " + std::to_string(v) + "; it must be positive");
    if (v > s.max)
      fail(where + ": \"" + s.key + "\" is " + std::to_string(v) + ", more than " + std::to_string(s.max) +
           ", the sane bound this loader sets (the released model has " + std::to_string(s.released) + ")");
  }
  if (c.dim % c.heads)
    fail(where + ": \"dim\" " + std::to_string(c.dim) + " is not a multiple of \"num_heads\" " +
         std::to_string(c.heads) + " (each head takes dim / num_heads channels)");
  c.head_dim = c.dim / c.heads;
  const std::string hd = "head_dim = dim / num_heads = " + std::to_string(c.head_dim);
  if (c.head_dim % 2)
    fail(where + ": " + hd + " is odd; split-half RoPE rotates channel pairs (i, i + head_dim / 2)");
  if (c.head_dim % 8)
    fail(where + ": " + hd + " is not a multiple of 8; RoPE fills half of each head with 4 axes of head_dim / 8 bands");
  if (c.head_dim > kMaxHeadDim)
    fail(where + ": " + hd + " is more than " + std::to_string(kMaxHeadDim) + ", the most the attention kernels hold");
  if (c.freq_dim % 2)
    fail(where + ": \"freq_dim\" " + std::to_string(c.freq_dim) +
         " is odd; the timestep sinusoid is cos and sin halves of freq_dim / 2 each");
  // the bands come from fp32(rope_base): bounded so it stays finite and every band at most 1
  if (!(c.rope_base >= 1 && c.rope_base <= kMaxRopeBase))
    fail(where + ": \"rope_base\" is " + num(c.rope_base) + "; expected a number from 1 to " + num(kMaxRopeBase) +
         " (the released model has 10000)");
  c.rope_bands = c.head_dim / 8;
}

TransformerConfig load_transformer_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  if (!path_exists(path)) fail(dir + ": no config.json (expected the transformer's, _class_name MOSSImageTransformer)");
  const Json j = load_json_file(path);
  if (!j.is_object()) fail(path + ": expected a JSON object");
  const std::string cls = json_string_or(j, "_class_name", "MOSSImageTransformer", path);
  if (cls != "MOSSImageTransformer")
    fail(path + ": \"_class_name\" is \"" + cls + "\", expected MOSSImageTransformer");
  TransformerConfig c;
  for (const SizeKey& s : kSizes) c.*(s.field) = json_int(j, s.key, path);
  c.rope_base = json_number(j, "rope_base", path);
  c.source = path;
  finish_transformer_config(c, path);
  return c;
}

namespace {

// The shape of a tensor the geometry is read from; errors name the file and the tensor.
Shape shape_of(const Checkpoint& ck, const std::string& name, int rank) {
  if (!ck.has(name))
    fail(ck.where() + ": missing tensor \"" + name +
         "\", needed to read the geometry from the tensor shapes (no config.json beside the file)");
  const Tensor t = ck.get(name);
  if (t.rank() != rank)
    fail(ck.file_of(name) + ": tensor \"" + name + "\" is " + std::string(dtype_name(t.dtype)) + " " +
         shape_str(t.shape) + ", expected rank " + std::to_string(rank) + (rank == 1 ? " [head_dim]" : " [out, in]"));
  return t.shape;
}

// One more than the largest N of the keys `<prefix>layers.N.*`.
int64_t count_layers(const Checkpoint& ck, const std::string& prefix) {
  const std::string lead = prefix + "layers.";
  int64_t n = 0;
  for (const std::string& name : ck.names()) {
    if (name.rfind(lead, 0) != 0) continue;
    const size_t dot = name.find('.', lead.size());
    const size_t len = dot == std::string::npos ? std::string::npos : dot - lead.size();
    const std::string digits = name.substr(lead.size(), len);
    // nine digits at most: a larger index is refused below as too many layers, never overflows
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
      fail(ck.file_of(name) + ": tensor \"" + name + "\" has no layer number N after \"" + lead +
           "\" (expected " + lead + "N. with N below 1024)");
    n = std::max<int64_t>(n, std::stoll(digits) + 1);
  }
  if (n == 0) fail(ck.where() + ": no \"" + lead + "N.*\" tensors; is this a MOSS-Image transformer?");
  return n;
}

}  // namespace

TransformerConfig infer_transformer_config(const Checkpoint& ck, const std::string& prefix) {
  const std::string where = ck.where() + " (geometry read from the tensor shapes)";
  TransformerConfig c;
  const Shape video = shape_of(ck, prefix + "video_embedder.weight", 2);
  c.dim = video[0];
  c.latent_channels = video[1];
  c.layers = count_layers(ck, prefix);
  const std::string qn = prefix + "layers.0.q_norm.weight";
  const int64_t head_dim = shape_of(ck, qn, 1)[0];
  if (head_dim < 1 || c.dim % head_dim)
    fail(ck.file_of(qn) + ": tensor \"" + qn + "\" is [" + std::to_string(head_dim) +
         "], a head_dim that does not divide dim " + std::to_string(c.dim) + " (from video_embedder.weight)");
  c.heads = c.dim / head_dim;
  c.ffn_dim = shape_of(ck, prefix + "layers.0.proj.ffn_down.weight", 2)[1];
  c.text_dim = shape_of(ck, prefix + "text_embedder.proj.weight", 2)[1];
  c.freq_dim = shape_of(ck, prefix + "time_embedding.0.weight", 2)[1];
  c.rope_base = 1e4;
  c.source = ck.where();
  finish_transformer_config(c, where);
  return c;
}

}  // namespace tf::moss_image
