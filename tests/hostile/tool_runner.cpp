#include "tool_runner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace tf::hostile {

std::string program_path(const std::string& program) {
  for (fs::path p : {fs::path(TF_BINARY_DIR) / "tools" / program, fs::path(TF_BINARY_DIR) / "tools" / program / program})
    if (fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0) return p.string();
  return "";
}

namespace {
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

Scratch::Scratch(const std::string& name) {
  dir = fs::temp_directory_path() / ("tf_hostile_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
}

Scratch::~Scratch() {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

RunResult run_program(const std::string& program, const std::vector<std::string>& args) {
  std::string exe = program_path(program);
  RunResult r;
  if (exe.empty()) return r;
  Scratch io("io_" + program);
  std::string cmd = shell_quote(exe);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((io / "out").string()) + " 2>" + shell_quote((io / "err").string()) + " </dev/null";
  int status = std::system(cmd.c_str());
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (status != -1 && WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  r.out = read_bytes(io / "out");
  r.err = read_bytes(io / "err");
  return r;
}

fs::path copy_tiny_pipeline(const fs::path& to) {
  fs::path src = fs::path(TF_TEST_DATA) / "tiny-pipeline";
  fs::create_directories(to);
  fs::copy(src, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return to;
}

void expect_clean_failure(const RunResult& r, const std::string& program, const std::vector<std::string>& must_name,
                          const std::vector<fs::path>& outputs) {
  EXPECT_NE(r.exit_code, 0) << "accepted hostile input; stderr: " << r.err;
  EXPECT_TRUE(r.exit_code > 0 && r.exit_code < 128) << "crashed (exit " << r.exit_code << "): " << r.err;
  std::string err = r.err;
  // progress lines and notes may come first; the error is the last line and the only error line
  while (!err.empty() && err.back() == '\n') err.pop_back();
  std::string last = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
  EXPECT_EQ(last.rfind(program + ": error: ", 0), 0u) << "the last stderr line must be the error: " << r.err;
  size_t error_lines = 0;
  for (size_t p = 0; (p = r.err.find(": error: ", p)) != std::string::npos; ++p) ++error_lines;
  EXPECT_EQ(error_lines, 1u) << "one error line expected: " << r.err;
  if (std::getenv("TF_HOSTILE_SHOW")) std::fprintf(stderr, "    %s\n", last.c_str());
  for (const auto& s : must_name) EXPECT_NE(last.find(s), std::string::npos) << "error must name \"" << s << "\": " << last;
  EXPECT_LT(last.size(), 600u) << "error line too long";
  for (const auto& o : outputs) {
    EXPECT_FALSE(fs::exists(o)) << o << " left behind after a failure";
    std::error_code ec;
    if (fs::is_directory(o.parent_path(), ec))
      for (auto& e : fs::directory_iterator(o.parent_path()))
        EXPECT_EQ(e.path().filename().string().rfind(o.filename().string() + ".tmp", 0), std::string::npos)
            << e.path() << " (temporary output) left behind";
  }
}

std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

namespace {
uint64_t header_length(const std::string& b) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(b.at(i));
  return n;
}
}  // namespace

std::string safetensors_header(const fs::path& p) {
  std::string b = read_bytes(p);
  return b.substr(8, header_length(b));
}

std::string u64_le_bytes(uint64_t n) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(n >> (8 * i));
  return b;
}

void rewrite_safetensors_header(const fs::path& p, const std::string& header) {
  std::string b = read_bytes(p);
  std::string data = b.substr(8 + header_length(b));
  write_bytes(p, u64_le_bytes(header.size()) + header + data);
}

void edit_safetensors_header(const fs::path& p, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json h = nlohmann::json::parse(safetensors_header(p));
  edit(h);
  rewrite_safetensors_header(p, h.dump());
}

void edit_json_file(const fs::path& p, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(read_bytes(p));
  edit(j);
  write_bytes(p, j.dump(2));
}

std::string png_header_only(uint32_t width, uint32_t height) {
  std::string b = std::string("\x89PNG\r\n\x1a\n", 8) + std::string("\0\0\0\x0d", 4) + "IHDR";
  for (uint32_t v : {width, height})
    for (int i = 3; i >= 0; --i) b.push_back(static_cast<char>(v >> (8 * i)));
  b += std::string("\x08\x02\0\0\0", 5);  // 8-bit RGB, no interlace
  uint32_t crc = 0xffffffffu;  // CRC-32 of "IHDR" + data
  for (size_t i = 12; i < b.size(); ++i) {
    crc ^= static_cast<uint8_t>(b[i]);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  for (int i = 3; i >= 0; --i) b.push_back(static_cast<char>(crc >> (8 * i)));
  return b;
}

fs::path first_safetensors(const fs::path& dir) {
  std::vector<fs::path> found;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") found.push_back(e.path());
  std::sort(found.begin(), found.end());
  return found.empty() ? fs::path() : found.front();
}

}  // namespace tf::hostile
