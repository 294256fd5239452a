// Tokens per second of the native tokenizer on one long text, one thread; bench/bench_tokenizer.py
// runs this and the reference library on the same text and prints the ratio.
//   TF_BENCH_TOKENIZER  tokenizer.json[.gz]
//   TF_BENCH_TEXT       UTF-8 text file (bench/bench_tokenizer.py writes one); its prompts are the
//                       pieces between U+001E separators, the whole text is the file without them
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "text/tokenizer.h"

namespace {

struct Fixture {
  std::unique_ptr<tf::text::Tokenizer> tok;
  std::string text;
  std::vector<std::string> prompts;
  size_t tokens = 0, prompt_tokens = 0;
};

Fixture& fixture() {
  static Fixture f = [] {
    Fixture x;
    const char* tok = std::getenv("TF_BENCH_TOKENIZER");
    const char* text = std::getenv("TF_BENCH_TEXT");
    if (!tok || !text) {
      std::fprintf(stderr, "bench_tokenizer: set TF_BENCH_TOKENIZER and TF_BENCH_TEXT (bench/bench_tokenizer.py does)\n");
      std::exit(2);
    }
    x.tok = std::make_unique<tf::text::Tokenizer>(tf::text::Tokenizer::load(tok));
    const std::string file = tf::read_text_file(text);
    size_t start = 0;
    while (start <= file.size()) {
      size_t sep = file.find('\x1e', start);
      if (sep == std::string::npos) sep = file.size();
      x.prompts.push_back(file.substr(start, sep - start));
      x.text += x.prompts.back();
      start = sep + 1;
    }
    x.tokens = x.tok->encode(x.text).size();
    for (const auto& p : x.prompts) x.prompt_tokens += x.tok->encode(p).size();
    return x;
  }();
  return f;
}

// Every word met for the first time: the cache is emptied before each pass.
void BM_EncodeFirstPass(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    state.PauseTiming();
    f.tok->clear_cache();
    state.ResumeTiming();
    benchmark::DoNotOptimize(f.tok->encode(f.text));
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(f.tokens));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(f.text.size()));
}

// Steady state: the words are cached from the passes before.
void BM_EncodeWarm(benchmark::State& state) {
  Fixture& f = fixture();
  f.tok->encode(f.text);
  for (auto _ : state) benchmark::DoNotOptimize(f.tok->encode(f.text));
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(f.tokens));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(f.text.size()));
}

// Prompt by prompt (a few KB each), first pass, as an encoder meets them.
void BM_EncodePrompts(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    state.PauseTiming();
    f.tok->clear_cache();
    state.ResumeTiming();
    for (const auto& p : f.prompts) benchmark::DoNotOptimize(f.tok->encode(p));
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(f.prompt_tokens));
}

BENCHMARK(BM_EncodePrompts)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EncodeFirstPass)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EncodeWarm)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
