#pragma once
// Tiny MOSS-Image transformer checkpoints written by the tests themselves: the official key list
// and shapes (references.md, "State dict"), distinct values in every tensor, in the diffusers
// folder layout or as one single-file export (fused qkv, a key prefix).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <unistd.h>

#include "core/bf16.h"
#include "families/moss_image/transformer/config.h"
#include "families/moss_image/transformer/weights.h"
#include "io/json_file.h"
#include "io/safetensors.h"

namespace tiny_transformer {

using namespace tf;
using namespace tf::moss_image;

// dim 64, 2 heads of 32 (4 bands), 3 layers, ffn 96, text 48, 16 latent channels, freq 32.
inline Json config_json() {
  return {{"_class_name", "MOSSImageTransformer"}, {"_diffusers_version", "0.36.0"}, {"dim", 64},
          {"num_layers", 3}, {"num_heads", 2}, {"ffn_dim", 96}, {"text_dim", 48}, {"latent_channels", 16},
          {"freq_dim", 32}, {"rope_base", 10000.0}};
}

inline TransformerConfig config() {
  TransformerConfig c;
  c.dim = 64, c.layers = 3, c.heads = 2, c.ffn_dim = 96, c.text_dim = 48, c.latent_channels = 16, c.freq_dim = 32;
  finish_transformer_config(c, "tiny");
  return c;
}

// Every official key with its shape, in the order of references.md's table.
inline std::vector<std::pair<std::string, Shape>> official_shapes(const TransformerConfig& c) {
  const int64_t D = c.dim, F = c.ffn_dim, hd = c.head_dim;
  std::vector<std::pair<std::string, Shape>> s;
  auto linear = [&](const std::string& n, int64_t out, int64_t in) {
    s.push_back({n + ".weight", {out, in}});
    s.push_back({n + ".bias", {out}});
  };
  linear("video_embedder", D, c.latent_channels);
  linear("text_embedder.proj", D, c.text_dim);
  for (int b = 0; b < 2; ++b) {
    const std::string p = "text_embedder.blocks." + std::to_string(b) + ".";
    for (const char* n : {"norm1", "norm2"}) s.push_back({p + n + ".weight", {D}});
    for (const char* n : {"q_norm", "k_norm"}) s.push_back({p + n + ".weight", {hd}});
    linear(p + "qkv", 3 * D, D);
    linear(p + "proj", D, D);
    linear(p + "ffn_gate", F, D);
    linear(p + "ffn_up", F, D);
    linear(p + "ffn_down", D, F);
  }
  linear("time_embedding.0", D, c.freq_dim);
  linear("time_embedding.2", D, D);
  linear("shared_block_modulation", 6 * D, D);
  linear("video_head_modulation", 2 * D, D);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    for (const char* n : {"norm1", "norm2"}) s.push_back({p + n + ".weight", {D}});
    for (const char* n : {"q_norm", "k_norm"}) s.push_back({p + n + ".weight", {hd}});
    for (const char* n : {"q", "k", "v", "o"}) s.push_back({p + "proj." + n + ".weight", {D, D}});
    s.push_back({p + "proj.ffn_up_gate.weight", {2 * F, D}});
    s.push_back({p + "proj.ffn_down.weight", {D, F}});
  }
  s.push_back({"final_norm_video.weight", {D}});
  s.push_back({"final_linear_video.weight", {c.latent_channels, D}});
  s.push_back({"rope.bands", {c.rope_bands}});
  return s;
}

// Norm weights and biases: the small params.
inline bool is_small(const std::string& name, const Shape& shape) { return shape.size() == 1 && name != "rope.bands"; }

// The official tensors with distinct values (a hash of the name and the index); matrices BF16,
// small params in `small`, rope.bands F32 from the formula.
inline NamedTensors official_tensors(DType small = DType::BF16) {
  const TransformerConfig c = config();
  NamedTensors out;
  for (const auto& [name, shape] : official_shapes(c)) {
    if (name == "rope.bands") {
      out.emplace_back(name, rope_bands_from_formula(c.rope_bands, c.rope_base));
      continue;
    }
    const DType dt = is_small(name, shape) ? small : DType::BF16;
    Tensor t = empty(dt, shape);
    const uint32_t seed = static_cast<uint32_t>(std::hash<std::string>{}(name));
    for (int64_t i = 0; i < t.numel(); ++i) {
      uint32_t h = (seed ^ static_cast<uint32_t>(i) * 2654435761u) * 2246822519u;
      h ^= h >> 15;
      const float v = static_cast<float>(h % 20011) / 10005.5f - 1.0f + 1.0f / 1024;  // not bf16-exact
      if (dt == DType::F32) t.ptr<float>()[i] = v;
      else t.ptr<uint16_t>()[i] = bf16_bits_from_float(v);
    }
    out.emplace_back(name, t);
  }
  return out;
}

inline std::string temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path p = fs::temp_directory_path() / ("tf_tx_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The diffusers folder: config.json, two shards and diffusion_pytorch_model.safetensors.index.json.
inline void write_diffusers_folder(const std::string& dir, const NamedTensors& tensors,
                                   const Json& config = config_json()) {
  std::filesystem::create_directories(dir);
  write_text(dir + "/config.json", config.dump(2));
  const size_t half = tensors.size() / 2;
  const std::string names[2] = {"diffusion_pytorch_model-00001-of-00002.safetensors",
                                "diffusion_pytorch_model-00002-of-00002.safetensors"};
  Json map = Json::object();
  NamedTensors shard[2];
  for (size_t i = 0; i < tensors.size(); ++i) {
    shard[i >= half].push_back(tensors[i]);
    map[tensors[i].first] = names[i >= half];
  }
  for (int s = 0; s < 2; ++s) write_safetensors(dir + "/" + names[s], shard[s]);
  write_text(dir + "/diffusion_pytorch_model.safetensors.index.json",
             Json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(2));
}

// layers.N.proj.{q,k,v}.weight fused into layers.N.proj.qkv.weight (q; k; v rows), every key
// under `prefix`, rope.bands dropped (ComfyUI-style exports do not carry it).
inline NamedTensors single_file_tensors(const NamedTensors& official, const std::string& prefix) {
  std::map<std::string, Tensor> by_name(official.begin(), official.end());
  NamedTensors out;
  for (const auto& [name, t] : official) {
    if (name == "rope.bands") continue;
    const size_t at = name.find(".proj.q.weight");
    if (name.rfind("layers.", 0) == 0 && at != std::string::npos) {
      const std::string p = name.substr(0, at) + ".proj.";
      const Tensor& q = t;
      const Tensor& k = by_name.at(p + "k.weight");
      const Tensor& v = by_name.at(p + "v.weight");
      Tensor qkv = empty(DType::BF16, {3 * q.dim(0), q.dim(1)});
      std::memcpy(qkv.rows(0, q.dim(0)).data, q.data, q.nbytes());
      std::memcpy(qkv.rows(q.dim(0), 2 * q.dim(0)).data, k.data, k.nbytes());
      std::memcpy(qkv.rows(2 * q.dim(0), 3 * q.dim(0)).data, v.data, v.nbytes());
      out.emplace_back(prefix + p + "qkv.weight", qkv);
      continue;
    }
    if (name.find(".proj.k.weight") != std::string::npos || name.find(".proj.v.weight") != std::string::npos)
      if (name.rfind("layers.", 0) == 0) continue;
    out.emplace_back(prefix + name, t);
  }
  return out;
}

// Each loaded view under its official name (q, k and v under proj.{q,k,v} whatever the layout).
inline std::map<std::string, const Tensor*> views(const TransformerWeights& w) {
  std::map<std::string, const Tensor*> v;
  auto linear = [&](const std::string& n, const TransformerLinear& l) {
    v[n + ".weight"] = &l.w;
    v[n + ".bias"] = &l.b;
  };
  linear("video_embedder", w.video_embedder);
  linear("text_embedder.proj", w.text_embedder.proj);
  for (size_t b = 0; b < w.text_embedder.blocks.size(); ++b) {
    const std::string p = "text_embedder.blocks." + std::to_string(b) + ".";
    const TextBlockWeights& t = w.text_embedder.blocks[b];
    v[p + "norm1.weight"] = &t.norm1, v[p + "norm2.weight"] = &t.norm2;
    v[p + "q_norm.weight"] = &t.q_norm, v[p + "k_norm.weight"] = &t.k_norm;
    linear(p + "qkv", t.qkv), linear(p + "proj", t.proj), linear(p + "ffn_gate", t.ffn_gate);
    linear(p + "ffn_up", t.ffn_up), linear(p + "ffn_down", t.ffn_down);
  }
  linear("time_embedding.0", w.time_embedding_0);
  linear("time_embedding.2", w.time_embedding_2);
  linear("shared_block_modulation", w.shared_block_modulation);
  linear("video_head_modulation", w.video_head_modulation);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const JointBlockWeights& l = w.layers[i];
    v[p + "norm1.weight"] = &l.norm1, v[p + "norm2.weight"] = &l.norm2;
    v[p + "q_norm.weight"] = &l.q_norm, v[p + "k_norm.weight"] = &l.k_norm;
    v[p + "proj.q.weight"] = &l.q, v[p + "proj.k.weight"] = &l.k, v[p + "proj.v.weight"] = &l.v;
    v[p + "proj.o.weight"] = &l.o;
    v[p + "proj.ffn_up_gate.weight"] = &l.ffn_up_gate, v[p + "proj.ffn_down.weight"] = &l.ffn_down;
  }
  v["final_norm_video.weight"] = &w.final_norm_video;
  v["final_linear_video.weight"] = &w.final_linear_video;
  v["rope.bands"] = &w.rope_bands;
  return v;
}

}  // namespace tiny_transformer
