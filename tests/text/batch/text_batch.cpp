// Test-only batch driver for the differential test: one process, many texts.
//   text-batch TOKENIZER   stdin, one JSON object per line:
//     {"encode": "text"}                      -> [ids]
//     {"decode": [ids], "skip_special": bool} -> "text" (ASCII-escaped JSON)
#include <cstdio>
#include <iostream>
#include <string>

#include "core/error.h"
#include "io/json_file.h"
#include "text/tokenizer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: text-batch TOKENIZER < requests.jsonl\n");
    return 2;
  }
  try {
    const tf::text::Tokenizer tok = tf::text::Tokenizer::load(argv[1]);
    std::ios::sync_with_stdio(false);
    std::string line, out;
    size_t n = 0;
    while (std::getline(std::cin, line)) {
      ++n;
      const tf::Json j = tf::parse_json(line, "stdin line " + std::to_string(n));
      if (j.contains("encode")) {
        out += tf::Json(tok.encode(j["encode"].get<std::string>())).dump();
      } else if (j.contains("decode")) {
        const bool skip = j.value("skip_special", false);
        out += tf::Json(tok.decode(j["decode"].get<std::vector<int32_t>>(), skip)).dump(-1, ' ', true);
      } else {
        tf::fail("stdin line " + std::to_string(n) + ": expected {\"encode\": ...} or {\"decode\": ...}");
      }
      out += '\n';
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "text-batch: error: %s\n", e.what());
    return 1;
  }
}
