#pragma once
// Runs the built programs on hostile inputs and checks how they fail: a non-zero exit (not a
// signal), exactly one line on stderr saying "<program>: error: ..." that names what it must, and
// no output file (nor a temporary one) left behind.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf::hostile {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;  // 128 + signal when a signal ended it
  std::string out, err;
};

// Path of the built program tf-NAME, or "" when it is not built.
std::string program_path(const std::string& program);

RunResult run_program(const std::string& program, const std::vector<std::string>& args);

// A fresh folder for one test, removed by the caller's Scratch.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name);
  ~Scratch();
  fs::path operator/(const std::string& p) const { return dir / p; }
};

// Copies the embedded tiny pipeline (tests/data/tiny-pipeline) into `to`.
fs::path copy_tiny_pipeline(const fs::path& to);

// Expects a clean failure: see the file comment. `must_name`: substrings the one error line holds.
// `outputs`: paths that must not exist afterwards (nor <path>.tmp.* beside them).
void expect_clean_failure(const RunResult& r, const std::string& program, const std::vector<std::string>& must_name,
                          const std::vector<fs::path>& outputs = {});

// Reads and writes whole files.
std::string read_bytes(const fs::path& p);
void write_bytes(const fs::path& p, const std::string& bytes);

// The 8 little-endian bytes of n: a safetensors file's leading header length.
std::string u64_le_bytes(uint64_t n);

// Safetensors surgery: the header as JSON, and the file rewritten with a new header and the same
// data area.
std::string safetensors_header(const fs::path& p);
void rewrite_safetensors_header(const fs::path& p, const std::string& header);
// The header parsed, edited and written back compactly, the data area untouched.
void edit_safetensors_header(const fs::path& p, const std::function<void(nlohmann::json&)>& edit);
// A JSON file (a config) parsed, edited and written back with two-space indent.
void edit_json_file(const fs::path& p, const std::function<void(nlohmann::json&)>& edit);
// A PNG of a valid IHDR (CRC included) for a width x height RGB 8-bit picture and no pixels: a
// header any size check sees, for sizes too large to write.
std::string png_header_only(uint32_t width, uint32_t height);

// The first *.safetensors file of a folder (sorted by name).
fs::path first_safetensors(const fs::path& dir);

}  // namespace tf::hostile

#define TF_REQUIRE_PROGRAM(name)                                                              \
  do {                                                                                        \
    if (tf::hostile::program_path(name).empty()) GTEST_SKIP() << name << " is not built yet"; \
  } while (0)
