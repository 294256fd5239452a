# Sourced by a device call's script, from the repo root on the GPU machine: unpacks the carried
# archive ($1: .carry/NAME.tar.xz, into .carry/NAME), puts its programs' folder ($2, default the archive's
# folder) first on the library path, links the tests' data where the programs look for it, installs the
# carried wheels into /tmp/site and starts making the random released-geometry pipeline folder in
# $P (/tmp/moss-pipeline-random) in the background (`wait` before using it).
set -u
ARCHIVE=$1
[ -d "${ARCHIVE%.tar.xz}" ] || tar xJf "$ARCHIVE" -C .carry
B=$PWD/${2:-${ARCHIVE%.tar.xz}}
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn "$PWD/tests" /work/main/tests
P=${P:-/tmp/moss-pipeline-random}
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f "$P/model_index.json" ] || (PYTHONPATH=/tmp/site timeout 240 python3 bench/generate_vs_torch/make_pipeline_gpu.py \
  --out "$P" > "$OUT/make.txt" 2>&1; echo "made: $(tail -1 "$OUT/make.txt")") &

# vae_decode LABEL "VAR=VALUE ..." SIZES: the VAE's decode at SIZES (comma-separated), medians of 5, one JSON line a
# size, labelled, appended to $OUT/vae.jsonl.
vae_decode() {
  env $2 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $3 --reps 5 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
}

# vae_gate_and_timeline "VAR=VALUE ...": the VAE gate at 1024^2 (a torch case, then our check) and one decode's
# kernel timeline ($OUT/vae-kernels.txt, the raw CSV xz'd), both under the given variables.
vae_gate_and_timeline() {
  PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
    --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
  env $1 timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
  rm -f $OUT/vae-case.safetensors
  local cupti
  cupti=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
  env $1 CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv \
    LD_LIBRARY_PATH=$cupti:$LD_LIBRARY_PATH timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 \
    --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1
  sed -n 3,26p $OUT/vae-kernels.txt
  xz -9 $OUT/vae-kernels.csv
}
