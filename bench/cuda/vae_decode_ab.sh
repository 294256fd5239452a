#!/usr/bin/env bash
# A device call's interleaved A/B of the VAE decode: one release build (BIN: bench_vae_cuda,
# libtf_kernel_timeline.so), a variant's two choices switched by its environment variable. Each choice at
# 512^2, 1024^2, 2048^2, then three more 1024^2 pairs (median of REPS each, the output hash on every line,
# into OUT/vae.jsonl), then each choice's kernel timeline at 1024^2 (OUT/vae-kernels-CHOICE.{csv,txt}).
#   bench/cuda/vae_decode_ab.sh BIN VAE_DIR OUT VARIABLE CHOICE_A CHOICE_B
set -u
[ $# -eq 6 ] || { echo "usage: $0 BIN VAE_DIR OUT VARIABLE CHOICE_A CHOICE_B" >&2; exit 2; }
BIN=$1 VAE=$2 OUT=$3 VAR=$4 A=$5 B=$6
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
decode() {  # choice, sizes
  env "$VAR=$1" timeout 60 "$BIN/bench_vae_cuda" --model "$VAE" --sizes "$2" --reps "${REPS:-7}" --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a "$OUT/vae.jsonl" | cut -c1-200
}
decode "$A" 512,1024,2048
decode "$B" 512,1024,2048
for _ in 1 2 3; do decode "$A" 1024; decode "$B" 1024; done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in "$A" "$B"; do
  env "$VAR=$v" CUDA_INJECTION64_PATH="$BIN/libtf_kernel_timeline.so" TF_TIMELINE_OUT="$OUT/vae-kernels-$v.csv" \
    LD_LIBRARY_PATH="$CUPTI:${LD_LIBRARY_PATH:-}" timeout 60 "$BIN/bench_vae_cuda" --model "$VAE" --sizes 1024 --reps 2 \
    --what decode > /dev/null 2>&1
  python3 "$HERE/kernel_gaps.py" "$OUT/vae-kernels-$v.csv" --eager --last 1 > "$OUT/vae-kernels-$v.txt" 2>&1
  echo "-- $v"; sed -n 3,16p "$OUT/vae-kernels-$v.txt"
done
