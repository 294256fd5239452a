#pragma once
// The kernel variants a run may choose, for comparisons: one table, each row an environment
// variable, its choices (the default first), what it chooses and whether every choice gives the
// default's bytes. The environment is read once, at the first use, every row validated then; a
// kernel then reads an int. Tests and benchmarks choose through variants::Override.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace tf {

enum class Variant : int {
  gemm,
  cuda_graph,
  delta_rule,
  attention,
  streaming_l2,
  linear_shares,
  recurrence_layout,
  streaming_tile_192,
  cuda_pdl,
  cuda_pdl_prep,
  gated_in_product,
  conv_tile,
  conv_kernel,
  split_operands,
  channels_attention_kernel,
  softmax_rows,
  cpu_linear,
  linear_large_rows,
  situ,
  sampler_loop,
  linear_epilogue,
  conv_outputs,
  conv_upsample,
  conv_shortcut,
  conv_weights,
  group_stats,
  count
};
constexpr size_t kVariantCount = static_cast<size_t>(Variant::count);

struct VariantRow {
  Variant variant;
  std::string_view env;
  std::array<std::string_view, 4> choices;  // the default first; unused slots empty
  std::string_view chooses;                 // one line: what the choices change
  bool same_bytes;                          // false: other bytes, within the same contract
};

inline constexpr std::array<VariantRow, kVariantCount> kVariantTable = {{
    {Variant::gemm, "TF_GEMM", {"auto", "cublaslt", "wgmma"},
     "CUDA's bf16 products: `auto` the weight-streaming kernel up to 128 rows, cuBLASLt above; `cublaslt` cuBLASLt "
     "at every row count (so no k shares and no gated product in the product's launch); `wgmma` our TMA wgmma "
     "kernel above 128 rows",
     false},
    {Variant::cuda_graph, "TF_CUDA_GRAPH", {"on", "off"},
     "`on`: the encoder's forward for a pack layout (up to 128 rows), and the transformer's packed pass for a layout "
     "(each sample's size, text length, skipped blocks), seen a second time recorded as one CUDA graph, then "
     "replayed; `off`: every forward launched kernel by kernel",
     true},
    {Variant::delta_rule, "TF_DELTA_RULE", {"auto", "recurrent", "chunked"},
     "the gated delta rule's form: `auto` the chunked form (its products on the tensor cores as 3xTF32) for a "
     "sequence of 128 tokens or more and the recurrence below; `recurrent` or `chunked` every sequence on that form",
     false},
    {Variant::attention, "TF_ATTENTION", {"auto", "mma"},
     "the attention over (tokens, heads): causal, `auto` the wgmma kernel at head dims 64, 128 and 256, mma.sync "
     "at the other tensor-core head dims, the scalar kernel otherwise, `mma` keeps the wgmma dims on mma.sync; fused "
     "numerics, `auto` the warp-specialised wgmma kernel at head dims 64 and 128, `mma` (and other dims) the "
     "warp-per-row CUDA-core kernel",
     false},
    {Variant::streaming_l2, "TF_STREAMING_L2", {"weights_first", "none"},
     "the weight-streaming products' weights read evict-first from L2 (`weights_first`) or with L2's default "
     "policy (`none`)",
     true},
    {Variant::linear_shares, "TF_LINEAR_SHARES", {"on", "off"},
     "the encoder's out / o and down products: `on` leaves their fp32 k-share sums to the residual add, `off` adds "
     "the k shares in a thread-block cluster",
     false},
    {Variant::recurrence_layout, "TF_RECURRENCE_LAYOUT", {"32x1", "16x1", "16x2"},
     "the recurrent delta rule at key head dim 128: a lane holds 32 state rows of one column (4 row groups), or 16 "
     "rows of one or two columns (twice as many warps, or as many)",
     false},
    {Variant::streaming_tile_192, "TF_STREAMING_TILE_192", {"on", "off"},
     "`on`: the weight-streaming products take 192-row weight tiles where 256-row ones take one k share each and "
     "leave SMs idle (the MLP's gate+up product on 128 blocks of 192 rows instead of 96 of 256); `off` keeps 256",
     true},
    {Variant::cuda_pdl, "TF_CUDA_PDL", {"on", "off"},
     "`on`: the weight-streaming products launch as programmatic dependents of the kernel before them (their first "
     "weight stage asked for while it finishes) and recorded work's tensors come from one arena; `off`: after it "
     "ends, tensors from the stream-ordered pool",
     true},
    {Variant::cuda_pdl_prep, "TF_CUDA_PDL_PREP", {"on", "off"},
     "`on` (with `TF_CUDA_PDL=on`): the DeltaNet prep launches as a dependent of its in-projection, starting once "
     "the product's main loop is done; `off`: after the product ends",
     true},
    {Variant::gated_in_product, "TF_GATED_IN_PRODUCT", {"on", "off"},
     "`on`: the MLP's gate and up products in one streaming launch whose tiles alternate eight rows of each, its "
     "epilogue writing the silu-gated product; `off`: both products written out, then the gated product's kernel",
     true},
    {Variant::conv_tile, "TF_CONV_TILE", {"64", "128"},
     "the mma.sync convolution kernel's block tile: 64 output positions (two blocks an SM) or 128 (one)", true},
    {Variant::conv_kernel, "TF_CONV_KERNEL", {"auto", "mma"},
     "the VAE's convolutions: `auto` the wgmma kernels where the input channels are a multiple of 64, mma.sync "
     "otherwise; `mma` every one on mma.sync",
     false},
    {Variant::split_operands, "TF_SPLIT_OPERANDS", {"auto", "gather"},
     "the VAE's wgmma products (convolutions, the channels attention's two): `auto` reads operands split beforehand "
     "into bf16 hi and lo, channels last, through TMA where the shapes allow (a GroupNorm before a convolution "
     "folded into that split); `gather` splits them in the kernel",
     true},
    {Variant::channels_attention_kernel, "TF_CHANNELS_ATTENTION_KERNEL", {"wgmma", "mma"},
     "the channels attention's (the VAE's) two split products on the wgmma kernel or on mma.sync (which gathers "
     "its operands)",
     false},
    {Variant::softmax_rows, "TF_SOFTMAX_ROWS", {"tiles", "resident", "strided"},
     "the channels attention's softmax: `tiles`, where both products read split operands through TMA, split over "
     "them (the scores' epilogue writes each 128-key tile's exp(s - tile max) with the tile's stats, a pass makes "
     "each tile's factor, the values' product joins each 128-key block times it: no scores stored), elsewhere as "
     "`resident`; `resident` a pass between the products holding rows of 4,096 or 16,384 scores in registers (one "
     "read); `strided` that pass reading every row three times",
     false},
    {Variant::cpu_linear, "TF_CPU_LINEAR", {"auto", "scalar", "avx2", "avx512"},
     "the CPU's linear kernel: `auto` the widest the machine has; a named one where the machine has it, else the "
     "widest it has",
     true},
    {Variant::linear_large_rows, "TF_LINEAR_LARGE_ROWS", {"4224", "4096", "8192"},
     "CUDA's bf16 products above 128 rows: the row count at which cuBLASLt's algorithm is chosen, once per weight "
     "shape and reused for every count (4224: a 1024^2 picture's 4,096 image tokens and up to 128 text tokens)",
     false},
    {Variant::situ, "TF_SITU", {"lookup", "formula"},
     "CUDA's SiTU gated product: `lookup` its two fp32 factors from tables of all 65,536 bf16 inputs (made once by the "
     "formula's code), `formula` evaluated per element",
     true},
    {Variant::sampler_loop, "TF_SAMPLER_LOOP", {"device", "host"},
     "the MOSS-Image sampling loop: `device` keeps the latents on the transformer's device (each step's token "
     "rows, guidance and Euler update there; on CUDA one recorded graph a step), `host` brings every step's "
     "velocities back and updates the latents on the CPU",
     true},
    {Variant::linear_epilogue, "TF_LINEAR_EPILOGUE", {"fused", "separate"},
     "CUDA's products above 128 rows followed by a gated residual add or SiTU's gated product: `fused` our TMA wgmma "
     "kernel with that step in its epilogue; `separate` the product as TF_GEMM says, then the element-wise kernel",
     false},
    {Variant::conv_outputs, "TF_CONV_OUTPUTS", {"auto", "columns", "rows"},
     "the TMA-fed convolutions' tiles: `columns` takes 96 or 192 output channels as the wgmma's N (a tile is 128 "
     "positions x all of them, so the small decoder's widths fill it); `auto` as `columns`, and where a tile is one "
     "picture row of a 3x3 stride-1 convolution each tap row's inputs are read once for its three taps (192 outputs as "
     "two 96-output tiles); `rows` tiles every one in 128 output channels",
     true},
    {Variant::conv_upsample, "TF_CONV_UPSAMPLE", {"subpixel", "upsampled"},
     "CUDA's nearest 2x upsample + 3x3 convolution on the TMA kernels (channels a multiple of 64, outputs other than "
     "96): `subpixel` four 2x2 convolutions of the picture itself with summed weights (bf16 hi + lo), 11 products a "
     "position where `upsampled` (the convolution of the upsampled picture, read through the split) takes 18",
     false},
    {Variant::conv_shortcut, "TF_CONV_SHORTCUT", {"separate", "beside"},
     "CUDA's group_norm_conv2d with a 1x1 convolution of x beside (the resnet's shortcut): `separate` splits x for "
     "it in its own pass; `beside` writes x's own split in the GroupNorm'd split's pass, from one read (opt-in: "
     "the same bytes, within noise of separate at 1024^2, and x's raw split held beside the normalised one raises "
     "the peak by 0.75 GiB)",
     true},
    {Variant::conv_weights, "TF_CONV_WEIGHTS", {"prepared", "per_call"},
     "the VAE's convolution weights on CUDA: `prepared` the model reorders them once at load (tap-major, or the "
     "sub-pixel classes' sums) and the calls read that; `per_call` each call reorders them into its workspace",
     true},
    {Variant::group_stats, "TF_GROUP_STATS", {"pass", "rows", "all"},
     "GroupNorm statistics of a CUDA convolution's output that the next op asks for: `pass` a pass over the output "
     "reads it again; `rows` the row tiles' consumers sum each channel's 128 positions in fp32 from their registers "
     "after staging a tile and a small kernel combines those in fp64; `all` the halo tiles' consumers too, a warp's "
     "16 positions a run (other kernels: a pass; opt-in until a GPU has run them)",
     false},
}};

namespace variants {

constexpr int choice_count(const VariantRow& r) {
  int n = 0;
  while (n < int(r.choices.size()) && !r.choices[n].empty()) ++n;
  return n;
}

constexpr const VariantRow& row(Variant v) { return kVariantTable[static_cast<size_t>(v)]; }

// The index of `name` among v's choices, or -1.
constexpr int choice_index(Variant v, std::string_view name) {
  for (int i = 0; i < choice_count(row(v)); ++i)
    if (row(v).choices[i] == name) return i;
  return -1;
}

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kVariantCount; ++i)
    if (kVariantTable[i].variant != static_cast<Variant>(i) || choice_count(kVariantTable[i]) < 2) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kVariantTable: one row per Variant, in its order, each with two choices or more");

using Choices = std::array<int, kVariantCount>;

// Every row's choice as the environment gives it now: the default where unset or empty; a value
// not among a row's choices is a tf::Error "NAME=value: expected a, b or c".
Choices from_environment();

// The choices in force now (recorded work is replayed only under the ones it was recorded under).
Choices current();

// Within its scope v takes `choice` (a tf::Error naming the variable and its choices if it is not
// one); the previous choice comes back on destruction. Overrides nest; for one thread at a time.
class Override {
 public:
  Override(Variant v, std::string_view choice);
  ~Override();
  Override(const Override&) = delete;
  Override& operator=(const Override&) = delete;

 private:
  Variant v_;
  int previous_;
};

// The table as markdown (README.md holds a copy, checked against it).
std::string markdown();

namespace detail {
// The process's choices, the environment read and validated at the first call.
int* chosen();
}  // namespace detail

}  // namespace variants

// The choice in force for v: its index in v's row, 0 the default.
inline int variant(Variant v) {
  static int* const chosen = variants::detail::chosen();
  return chosen[static_cast<int>(v)];
}

// A choice of row V named at compile time: a name not in the row does not compile.
template <Variant V>
struct ChoiceOf {
  consteval ChoiceOf(const char* name) : index(variants::choice_index(V, name)) {
    if (index < 0) throw "not a choice of this variant";
  }
  int index;
};

// Whether V's choice in force is the named one: variant_is<Variant::gemm>("cublaslt").
template <Variant V>
inline bool variant_is(ChoiceOf<V> choice) {
  return variant(V) == choice.index;
}

}  // namespace tf
