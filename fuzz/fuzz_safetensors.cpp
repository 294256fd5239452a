// The safetensors header and data area: whatever the bytes, either a clear error or views that lie
// wholly inside the buffer with byte sizes matching their shapes.
#include "fuzz_target.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = tf::SafetensorsFile::parse(tf::fuzz::bytes_of(data, size), "fuzz.safetensors");
    for (auto& [name, entry] : f->entries()) {
      tf::Tensor t = f->get(name);
      if (t.nbytes() != entry.end - entry.begin) __builtin_trap();
      tf::fuzz::touch(t.data, t.nbytes());
    }
  } catch (const tf::Error&) {
  }
  return 0;
}
