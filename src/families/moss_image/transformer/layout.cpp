#include "families/moss_image/transformer/layout.h"

#include "core/error.h"

namespace tf::moss_image {

namespace {

// The prefixes kohakumoss reads besides bare keys; no official key starts with any of them.
constexpr const char* kPrefixes[] = {"model.diffusion_model.", "diffusion_model.", "transformer."};

std::string prefix_of(const std::string& name) {
  for (const char* p : kPrefixes)
    if (name.rfind(p, 0) == 0) return p;
  return "";
}

std::string shown(const std::string& prefix) { return prefix.empty() ? "no prefix" : "prefix \"" + prefix + "\""; }

}  // namespace

std::string find_transformer_prefix(const Checkpoint& ckpt) {
  const std::vector<std::string> names = ckpt.names();
  if (names.empty()) fail(ckpt.where() + ": holds no tensors; expected a MOSS-Image transformer");
  const std::string prefix = prefix_of(names.front());
  for (const std::string& n : names)
    if (prefix_of(n) != prefix)
      fail(ckpt.file_of(n) + ": keys under different prefixes: \"" + names.front() + "\" (" + shown(prefix) +
           ") and \"" + n + "\" (" + shown(prefix_of(n)) +
           "); all keys must share one of model.diffusion_model., diffusion_model., transformer. or none");
  return prefix;
}

}  // namespace tf::moss_image
