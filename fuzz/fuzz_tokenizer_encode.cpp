// The tokenizer on arbitrary bytes (the embedded tiny tokenizer, trained with Qwen3.5's pipeline):
// invalid UTF-8 is a clear error; valid text gives ids the tokenizer knows, which decode.
#include "fuzz_target.h"
#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tf::text::Tokenizer tokenizer =
      tf::text::Tokenizer::load(TF_TEST_DATA "/tiny-pipeline/tokenizer/tokenizer.json");
  try {
    std::vector<int32_t> ids = tokenizer.encode(tf::fuzz::bytes_of(data, size));
    const size_t limit = tokenizer.summary().id_limit;
    for (int32_t id : ids)
      if (id < 0 || static_cast<size_t>(id) >= limit) __builtin_trap();
    (void)tokenizer.decode(ids);
  } catch (const tf::Error&) {
  }
  return 0;
}
