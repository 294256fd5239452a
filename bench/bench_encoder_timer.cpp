// Times TensorFold's MOSS-Image encoder forward on a device (the C++ half of bench/encoder_vs_torch):
// the weight load against `cat` reading the same shards, the device copy bandwidth (for the
// weight-streaming floor), then each token count and a packed prompt pair, as JSON lines on stdout
// shaped like torch_timer.py's. Usage:
//   bench_encoder_timer --model DIR [--counts 10,34,...] [--pair 75,10] [--reps 15] [--device cuda]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <cstring>
#include <string>
#include <vector>

#include "backend/device/device.h"
#include "core/bytes_hash.h"
#include "core/error.h"
#include "families/moss_image/encoder/encoder.h"
#include "io/checkpoint.h"
#ifdef TF_HAVE_CUDA
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/runtime/runtime.h"
#endif

namespace {

using namespace tf;
using Clock = std::chrono::steady_clock;

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) v.push_back(std::stoll(item));
  return v;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Read + write bytes per second of a large device-to-device copy (the convention of the floor).
double copy_bandwidth(Device d) {
#ifdef TF_HAVE_CUDA
  if (d != Device::CUDA) return 0;
  size_t n = size_t(2) << 30;
  void *a = cuda::device_alloc(n), *b = cuda::device_alloc(n);
  TF_CUDA(cudaMemsetAsync(a, 1, n, cuda::stream()));
  std::vector<double> t;
  cudaEvent_t e0, e1;
  TF_CUDA(cudaEventCreate(&e0));
  TF_CUDA(cudaEventCreate(&e1));
  for (int i = 0; i < 12; ++i) {
    TF_CUDA(cudaEventRecord(e0, cuda::stream()));
    TF_CUDA(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, cuda::stream()));
    TF_CUDA(cudaEventRecord(e1, cuda::stream()));
    TF_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    TF_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 2) t.push_back(ms / 1e3);
  }
  cuda::device_free(a);
  cuda::device_free(b);
  return 2.0 * double(n) / median(t);
#else
  (void)d;
  return 0;
#endif
}

int run(int argc, char** argv) {
  std::string model, device = "cuda", counts_s = "10,34,63,75,256,1024,4096", pair_s = "75,10";
  int reps = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--model") model = v;
    else if (k == "--device") device = v;
    else if (k == "--counts") counts_s = v;
    else if (k == "--pair") pair_s = v;
    else if (k == "--reps") reps = std::stoi(v);
    else fail("bench_encoder_timer: unknown flag " + k);
  }
  require(!model.empty(), "bench_encoder_timer: --model DIR is required");
  Device dev = select_device(device);
  const std::string te = resolve_component(model, "text_encoder");

  auto t0 = Clock::now();
  std::string cat = "cat '" + te + "'/*.safetensors > /dev/null";
  require(std::system(cat.c_str()) == 0, "bench_encoder_timer: " + cat + " failed");
  const double cat_s = seconds_since(t0);
  size_t shard_bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(te))
    if (e.path().extension() == ".safetensors") shard_bytes += e.file_size();

  LoadOptions wo;
  wo.device = dev;
  t0 = Clock::now();
  moss_image::Encoder enc = moss_image::Encoder::load(te, wo);
  const double load_s = seconds_since(t0);
  const moss_image::EncoderConfig& c = enc.config();
  std::fprintf(stderr, "%s\n", c.summary().c_str());

  size_t weight_bytes = 0, embed_bytes = enc.weights().embed_tokens.nbytes();
  weight_bytes += embed_bytes + enc.weights().norm.nbytes();
  for (const auto& l : enc.weights().layers) {
    for (const Tensor* t : {&l.input_layernorm, &l.post_attention_layernorm, &l.gate_proj, &l.up_proj, &l.down_proj,
                            &l.delta.in_proj_qkv, &l.delta.in_proj_z, &l.delta.in_proj_b, &l.delta.in_proj_a,
                            &l.delta.conv1d, &l.delta.dt_bias, &l.delta.A_log, &l.delta.norm, &l.delta.out_proj,
                            &l.attn.q_proj, &l.attn.k_proj, &l.attn.v_proj, &l.attn.q_norm, &l.attn.k_norm,
                            &l.attn.o_proj})
      weight_bytes += t->nbytes();
  }
  const double bw = copy_bandwidth(dev);
  std::printf("{\"impl\": \"setup\", \"device\": \"%s\", \"weight_bytes\": %zu, \"embed_bytes\": %zu, "
              "\"shard_bytes\": %zu, \"cat_s\": %.3f, \"load_s\": %.3f, \"copy_bw\": %.4g}\n",
#ifdef TF_HAVE_CUDA
              dev == Device::CUDA ? cuda::device_description().c_str() : "cpu",
#else
              "cpu",
#endif
              weight_bytes, embed_bytes, shard_bytes, cat_s, load_s, bw);
  std::fflush(stdout);

  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(std::min<int64_t>(c.vocab_size, 151000) - 1));
  std::vector<int64_t> counts = parse_list(counts_s), pair = parse_list(pair_s);
  std::vector<std::pair<std::string, SeqOffsets>> cases;
  for (int64_t n : counts) cases.push_back({std::to_string(n), {0, n}});
  if (!pair.empty()) {
    SeqOffsets offs{0};
    std::string name = "pair ";
    for (size_t i = 0; i < pair.size(); ++i) {
      offs.push_back(offs.back() + pair[i]);
      if (i) name += '+';
      name += std::to_string(pair[i]);
    }
    cases.push_back({name, offs});
  }
  // shortest first: a long case leaves the GPU hot and its clock lower for the cases after it
  std::stable_sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.second.back() < b.second.back(); });
  for (const auto& [name, offs] : cases) {
    // ids seeded by the case's own sequence lengths, so its hash does not depend on the other cases run
    std::seed_seq seed(offs.begin(), offs.end());
    std::mt19937 gen(seed);
    std::vector<int32_t> ids(offs.back());
    for (int32_t& id : ids) id = tok(gen);
    Tensor first = enc.forward(ids, offs);
    Tensor again = enc.forward(ids, offs);
    const bool repeat_same = first.nbytes() == again.nbytes() && std::memcmp(first.data, again.data, first.nbytes()) == 0;
    const uint64_t hash = bytes_hash(first.data, first.nbytes());  // the rows' bytes, to compare two builds
    int64_t nonfinite = 0;  // bf16 with an all-ones exponent: inf or NaN
    for (int64_t i = 0; i < first.numel(); ++i) nonfinite += (static_cast<const uint16_t*>(first.data)[i] & 0x7f80) == 0x7f80;
    std::vector<double> runs;
    const int r = offs.back() > 1024 ? std::max(3, reps / 3) : reps;
    for (int i = 0; i < r; ++i) {
      auto s = Clock::now();
      Tensor out = enc.forward(ids, offs);
      runs.push_back(seconds_since(s) * 1e3);
    }
    std::printf("{\"impl\": \"tensorfold\", \"case\": \"%s\", \"tokens\": %ld, \"median_ms\": %.4f, "
                "\"repeat_identical\": %s, \"nonfinite\": %ld, \"out_hash\": \"%016llx\", \"runs\": [",
                name.c_str(), long(offs.back()), median(runs), repeat_same ? "true" : "false", long(nonfinite),
                static_cast<unsigned long long>(hash));
    for (size_t i = 0; i < runs.size(); ++i) std::printf("%s%.4f", i ? ", " : "", runs[i]);
    std::printf("]}\n");
    std::fflush(stdout);
  }
#ifdef TF_HAVE_CUDA
  if (dev == Device::CUDA) std::fprintf(stderr, "%s\n", cuda::peak_memory_line().c_str());
#endif
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_encoder_timer: error: %s\n", e.what());
    return 1;
  }
}
