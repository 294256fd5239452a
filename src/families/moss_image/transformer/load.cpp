#include "families/moss_image/transformer/load.h"

#include <filesystem>

#include "core/error.h"
#include "families/moss_image/transformer/layout.h"
#include "io/checkpoint.h"

namespace fs = std::filesystem;

namespace tf::moss_image {

LoadedTransformer load_transformer(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  LoadedTransformer t;
  if (fs::is_regular_file(path, ec)) {
    if (fs::path(path).extension() != ".safetensors")
      fail(path + ": expected a folder or a .safetensors file of a MOSS-Image transformer");
    const Checkpoint ck = Checkpoint::open_file(path);
    const std::string prefix = find_transformer_prefix(ck);
    // a config.json beside the file is the transformer's (rope_base is only there); the weights
    // are then checked against it
    const std::string dir = fs::path(path).parent_path().string();
    const std::string beside = dir.empty() ? "." : dir;
    t.config = path_exists(beside + "/config.json") ? load_transformer_config(beside)
                                                    : infer_transformer_config(ck, prefix);
    t.weights = load_transformer_weights(ck, prefix, t.config, options);
    return t;
  }
  if (!fs::is_directory(path, ec)) fail(path + ": no such folder or .safetensors file");
  const std::string dir = resolve_component(path, "transformer");
  t.config = load_transformer_config(dir);
  const Checkpoint ck = Checkpoint::open_folder(dir);
  t.weights = load_transformer_weights(ck, find_transformer_prefix(ck), t.config, options);
  return t;
}

}  // namespace tf::moss_image
