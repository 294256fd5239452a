// model.safetensors.index.json: the input is the index of a folder that holds two small shards.
#include <filesystem>

#include "fuzz_target.h"
#include "io/checkpoint.h"

namespace {

std::string folder() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    fs::path d = fs::path(tf::fuzz::scratch_dir()) / "shards";
    fs::create_directories(d);
    tf::write_safetensors((d / "model-00001-of-00002.safetensors").string(),
                          {{"a", tf::zeros(tf::DType::F32, {2, 3})}, {"b", tf::zeros(tf::DType::BF16, {4})}});
    tf::write_safetensors((d / "model-00002-of-00002.safetensors").string(), {{"c", tf::zeros(tf::DType::I32, {1})}});
    return d.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string dir = folder();
  tf::fuzz::write_file(dir + "/model.safetensors.index.json", data, size);
  try {
    tf::Checkpoint c = tf::Checkpoint::open_folder(dir);
    for (const std::string& name : c.names()) {
      tf::Tensor t = c.get(name);
      tf::fuzz::touch(t.data, t.nbytes());
      (void)c.file_of(name);
    }
  } catch (const tf::Error&) {
  }
  return 0;
}
