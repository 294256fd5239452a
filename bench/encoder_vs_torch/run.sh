#!/usr/bin/env bash
# bench/encoder_vs_torch: one command on the GPU machine. Makes the released-geometry random
# checkpoint (LAYERS=32 by default), times TensorFold's encoder (bench_encoder_timer, built on the
# build machine with the release preset and carried in BIN) and transformers bf16 (eager, sdpa) on
# the same weights, and prints the joined table. Logs go to OUT.
#   BIN=.carry/cudaenc OUT=$OUT bench/encoder_vs_torch/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "${BIN:-build/release/bench}" && pwd)
OUT=${OUT:-/tmp/encoder_vs_torch}
CKPT=${CKPT:-/tmp/moss-random}
COUNTS=${COUNTS:-10,34,63,75,256,1024,4096}
PAIR=${PAIR:-75,10}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
if [ ! -f "$CKPT/text_encoder/model.safetensors.index.json" ]; then
  python3 "$HERE/make_checkpoint_gpu.py" --out "$CKPT" --layers "${LAYERS:-32}" 2>&1 | tee "$OUT/checkpoint.log"
fi
"$BIN/bench_encoder_timer" --model "$CKPT" --counts "$COUNTS" --pair "$PAIR" --reps "${REPS:-15}" \
  > "$OUT/ours.jsonl" 2> >(tee "$OUT/ours.err" >&2)
python3 "$HERE/torch_timer.py" --model "$CKPT" --counts "$COUNTS" --pair "$PAIR" --reps "${TORCH_REPS:-5}" \
  > "$OUT/torch.jsonl" 2> >(tee "$OUT/torch.err" >&2)
python3 "$HERE/report.py" "$OUT/ours.jsonl" "$OUT/torch.jsonl" | tee "$OUT/report.txt"
