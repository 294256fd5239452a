// Sizes the tools must refuse before any work: pictures and latents past the PNG limit (the error
// states the size and the limit), and runs whose estimated memory exceeds the device's (or
// --max-memory): the error names the file or flag, the size, the estimated and available GiB.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <utility>

#include "backend/device/device.h"
#include "families/flux2_vae/config.h"
#include "families/flux2_vae/memory.h"
#include "io/png.h"
#include "io/safetensors.h"
#include "tool_runner.h"

using namespace tf::hostile;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TF_HAS_ASAN 1
#endif
#endif
#ifndef TF_HAS_ASAN
#define TF_HAS_ASAN 0
#endif

namespace {

constexpr const char* kVae = "tf-flux2-vae";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct SizeCase {
  Scratch s;
  fs::path model, image, out, latents, png;
  tf::flux2_vae::Config cfg;

  explicit SizeCase(const std::string& name) : s(name) {
    model = copy_tiny_pipeline(s / "pipeline");
    cfg = tf::flux2_vae::load_config((model / "vae").string());
    image = s / "in.png";
    out = s / "out.safetensors";
    latents = s / "latents.safetensors";
    png = s / "out.png";
  }
  RunResult encode(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a{"encode", "--model", model.string(), "--image", image.string(), "--mean", "--out",
                               out.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_program(kVae, a);
  }
  RunResult decode(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a{"decode", "--model", model.string(), "--latents", latents.string(), "--out", png.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_program(kVae, a);
  }
  void write_latents(int64_t h, int64_t w) const {
    tf::write_safetensors(latents.string(), {{"latents", tf::zeros(tf::DType::F32, {cfg.latent_channels, h, w})}});
  }
};

// Runs `run` in a child process that does nothing else and returns the peak resident memory of the
// programs it ran (RUSAGE_CHILDREN of that child) and their exit code, or -1 and the code -1.
std::pair<double, int> peak_of(const std::function<RunResult()>& run) {
  int fd[2];
  if (pipe(fd) != 0) return {-1, -1};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const RunResult r = run();
    struct rusage ru {};
    getrusage(RUSAGE_CHILDREN, &ru);
    const long long msg[2] = {static_cast<long long>(ru.ru_maxrss), r.exit_code};
    const bool sent = write(fd[1], msg, sizeof msg) == static_cast<ssize_t>(sizeof msg);
    _exit(sent ? 0 : 1);
  }
  close(fd[1]);
  long long msg[2] = {-1, -1};
  const bool got = pid > 0 && read(fd[0], msg, sizeof msg) == static_cast<ssize_t>(sizeof msg);
  close(fd[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  if (!got) return {-1, -1};
  return {double(msg[0]) * 1024.0, static_cast<int>(msg[1])};
}

std::string gib_arg(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9f", bytes / kGiB);
  return b;
}

std::string gib_text(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g GiB", bytes / kGiB);
  return b;
}

void write_picture(const fs::path& p, int64_t w, int64_t h) {
  tf::RgbImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(static_cast<size_t>(w * h * 3), 77);
  tf::write_png_rgb8(p.string(), img);
}

}  // namespace

TEST(ToolSizes, EncodeRefusesAPictureOverTheMemoryLimit) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_enc_limit");
  // header only: the refusal must come before any pixel is read
  write_bytes(c.image, png_header_only(4096, 2048));
  const double need = tf::flux2_vae::encode_memory(c.cfg, 4096, 2048, tf::Device::CPU).bytes;
  expect_clean_failure(c.encode({"--max-memory", gib_arg(need * 0.99)}), kVae,
                       {"--image " + c.image.string(), "4096x2048", gib_text(need), "--max-memory", "smaller picture"},
                       {c.out});
}

TEST(ToolSizes, EncodeLimitIsTheEstimate) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_enc_edge");
  write_picture(c.image, 32, 32);
  const double need = tf::flux2_vae::encode_memory(c.cfg, 32, 32, tf::Device::CPU).bytes;
  expect_clean_failure(c.encode({"--max-memory", gib_arg(need * 0.99)}), kVae, {"32x32", "--max-memory"}, {c.out});
  const RunResult ok = c.encode({"--max-memory", gib_arg(need * 1.01)});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(c.out));
}

TEST(ToolSizes, EncodeRefusesTheLargestPictureBeyondPhysicalMemory) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_enc_phys");
  const double need = tf::flux2_vae::encode_memory(c.cfg, 16384, 16384, tf::Device::CPU).bytes;
  const double have = double(tf::available_memory(tf::Device::CPU).bytes);
  if (need <= have) GTEST_SKIP() << "this machine holds " << gib_text(have) << ", more than the " << gib_text(need) << " needed";
  write_bytes(c.image, png_header_only(16384, 16384));
  expect_clean_failure(c.encode(), kVae, {c.image.string(), "16384x16384", gib_text(need), "physical memory"}, {c.out});
}

TEST(ToolSizes, DecodeRefusesLatentsPastThePictureLimit) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_dec_side");
  c.write_latents(2, 2050);  // a 16400x16 picture
  expect_clean_failure(c.decode(), kVae, {c.latents.string(), "latents", "16400x16", "16384"}, {c.png});
  const RunResult r = run_program(kVae, {"decode", "--model", c.model.string(), "--tokens", c.latents.string(),
                                         "--height", "16", "--width", "16400", "--out", c.png.string()});
  expect_clean_failure(r, kVae, {"--height/--width", "16400x16", "16384"}, {c.png});
}

TEST(ToolSizes, DecodeRefusesLatentsOverTheMemoryLimit) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_dec_limit");
  c.write_latents(64, 32);  // a 256x512 picture
  const double need = tf::flux2_vae::decode_memory(c.cfg, 256, 512, tf::Device::CPU).bytes;
  expect_clean_failure(c.decode({"--max-memory", gib_arg(need * 0.99)}), kVae,
                       {"--latents " + c.latents.string(), "256x512", gib_text(need), "--max-memory", "smaller picture"},
                       {c.png});
  c.write_latents(4, 4);
  const double small = tf::flux2_vae::decode_memory(c.cfg, 32, 32, tf::Device::CPU).bytes;
  const RunResult ok = c.decode({"--max-memory", gib_arg(small * 1.01)});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(c.png));
}

TEST(ToolSizes, DecodeRefusesTheLargestPictureBeyondPhysicalMemory) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_dec_phys");
  const double need = tf::flux2_vae::decode_memory(c.cfg, 16384, 16384, tf::Device::CPU).bytes;
  const double have = double(tf::available_memory(tf::Device::CPU).bytes);
  if (need <= have) GTEST_SKIP() << "this machine holds " << gib_text(have) << ", more than the " << gib_text(need) << " needed";
  // the tokens file is never opened: the size is refused first
  const RunResult r = run_program(kVae, {"decode", "--model", c.model.string(), "--tokens", (c.s / "absent").string(),
                                         "--height", "16384", "--width", "16384", "--out", c.png.string()});
  expect_clean_failure(r, kVae, {"--height/--width", "16384x16384", gib_text(need), "physical memory"}, {c.png});
}

// The estimate is an upper bound of what a run adds to the program: a 768x768 decode's peak resident
// memory (the weights included) over the same program's doing nothing (`--help`: its code and
// libraries, which in a CUDA build include the mapped cuBLASLt and are no part of the estimate)
// stays under it.
TEST(ToolSizes, DecodeEstimateBoundsTheMeasuredPeak) {
  TF_REQUIRE_PROGRAM(kVae);
#if defined(__SANITIZE_ADDRESS__) || TF_HAS_ASAN
  GTEST_SKIP() << "ASan's shadow memory and quarantine are not the program's own";
#endif
  SizeCase c("size_dec_rss");
  c.write_latents(96, 96);
  const auto [base, base_code] = peak_of([] { return run_program(kVae, {"--help"}); });
  const auto [peak, code] = peak_of([&] { return c.decode(); });
  ASSERT_EQ(base_code, 0) << "tf-flux2-vae --help";
  ASSERT_EQ(code, 0) << "the 768x768 decode failed (run it by hand for its error)";
  ASSERT_GT(base, 0.0);
  const double measured = peak - base;
  const double need = tf::flux2_vae::decode_memory(c.cfg, 768, 768, tf::Device::CPU).bytes;
  EXPECT_LE(measured, need) << "measured peak " << peak / kGiB << " GiB over the program's " << base / kGiB
                            << " GiB, estimate " << need / kGiB << " GiB";
  EXPECT_GT(measured, need / 4) << "estimate " << need / kGiB << " GiB is far above the measured " << measured / kGiB
                                << " GiB";
}

TEST(ToolSizes, MossEncodeRefusesPromptsOverTheMemoryLimit) {
  TF_REQUIRE_PROGRAM("tf-moss-image");
  Scratch s("size_moss");
  const fs::path model = copy_tiny_pipeline(s / "pipeline"), prompt = s / "prompt.txt", out = s / "out.safetensors";
  write_bytes(prompt, "A red fox in the snow, watercolour.");
  const std::vector<std::string> base{"encode", "--model", model.string(), "--prompt-file", prompt.string(), "--out",
                                      out.string()};
  std::vector<std::string> a = base;
  a.insert(a.end(), {"--max-memory", "0.01"});
  expect_clean_failure(run_program("tf-moss-image", a), "tf-moss-image",
                       {"--prompt-file " + prompt.string(), "tokens", "GiB", "--max-memory", "shorter prompts"}, {out});
  a = base;
  a.insert(a.end(), {"--max-memory", "1"});
  const RunResult ok = run_program("tf-moss-image", a);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(out));
}

TEST(ToolSizes, MaxMemoryMustBeAPositiveNumber) {
  TF_REQUIRE_PROGRAM(kVae);
  SizeCase c("size_bad_limit");
  write_picture(c.image, 32, 32);
  for (const char* v : {"abc", "-3", "0", "inf"})
    expect_clean_failure(c.encode({"--max-memory", v}), kVae, {"--max-memory", "positive number of GiB", v}, {c.out});
}
