// tokenizer.json: whatever the file holds, a clear error or a tokenizer that encodes a fixed text.
#include "fuzz_target.h"
#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto tokenizer = tf::text::Tokenizer::from_json(tf::fuzz::bytes_of(data, size), "fuzz/tokenizer.json");
    const size_t limit = tokenizer.summary().id_limit;
    for (const char* text : {"Hello world", "<|im_start|>user\nA red fox.<|im_end|>", "caf\xC3\xA9  \t\n 123"}) {
      for (int32_t id : tokenizer.encode(text))
        if (id < 0 || static_cast<size_t>(id) >= limit) __builtin_trap();
    }
  } catch (const tf::Error&) {
  }
  return 0;
}
