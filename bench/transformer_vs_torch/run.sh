#!/usr/bin/env bash
# bench/transformer_vs_torch: one command on the GPU machine. Makes the released-geometry random
# transformer (make_checkpoint_gpu.py, kept in CKPT), times TensorFold's transformer
# (bench_transformer_timer, built on the build machine with the release preset and carried in BIN) and
# kohakumoss's torch model in bf16, eager and torch.compile, on the same weights, and prints the
# joined table. kohakumoss comes from the wheels carried in .whl/ (README.md says which).
#   BIN=.carry/tbench OUT=$OUT bench/transformer_vs_torch/run.sh
# SIZES (512,1024,2048), TEXT (100), UNCOND_TEXT (20), REPS (5), TORCH_REPS (5), COMPILE_BUDGET_S
# (240), IMPLS (eager,compile), MM_SIZE (8192). CASE=1 then writes the reference case of the same checkpoint
# (python/cases/moss_transformer_case.py, its float32 reference on the GPU; mlx, mlx-cpu, moss-image-mlx
# wheels in .whl/ too) to CASE_OUT and runs the transformer's reference gate on CUDA (tf-moss-image in
# TOOLS, default BIN); SKIP_BENCH=1 leaves the timing out. DEVICE=cpu (with CKPT a small checkpoint,
# SIZES=64) runs it all on the CPU; WHEELS names another folder of wheels.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$(cd "${BIN:-build/release/bench}" && pwd)
OUT=${OUT:-/tmp/transformer_vs_torch}
WORK=${WORK:-/tmp/transformer_vs_torch_work}
CKPT=${CKPT:-/tmp/moss-transformer-random}
SIZES=${SIZES:-512,1024,2048}
CASE_OUT=${CASE_OUT:-$OUT/released_case.safetensors}
TOOLS=${TOOLS:-$BIN}
DEVICE=${DEVICE:-cuda}
WHEELS=${WHEELS:-$ROOT/.whl}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1

if compgen -G "$WHEELS/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$WHEELS"/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c "import kohakumoss" 2> /dev/null || {
  echo "run.sh: kohakumoss is not importable; carry its wheel: pip download --no-deps kohakumoss==0.1.0 -d .whl" >&2
  exit 1
}

if [ ! -f "$CKPT/config.json" ]; then
  python3 "$HERE/make_checkpoint_gpu.py" --out "$CKPT" 2>&1 | tee "$WORK/checkpoint.log"
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
  "$BIN/bench_transformer_timer" --model "$CKPT" --sizes "$SIZES" --text "${TEXT:-100}" \
    --uncond-text "${UNCOND_TEXT:-20}" --reps "${REPS:-5}" --device "$DEVICE" \
    > "$OUT/ours.jsonl" 2> >(tee "$OUT/ours.err" >&2)
  python3 "$HERE/torch_timer.py" --model "$CKPT" --sizes "$SIZES" --text "${TEXT:-100}" \
    --uncond-text "${UNCOND_TEXT:-20}" --reps "${TORCH_REPS:-5}" --impls "${IMPLS:-eager,compile}" \
    --compile-budget-s "${COMPILE_BUDGET_S:-240}" --mm-size "${MM_SIZE:-8192}" --device "$DEVICE" \
    > "$OUT/torch.jsonl" 2> >(tee "$OUT/torch.err" >&2)
  python3 "$HERE/report.py" "$OUT/ours.jsonl" "$OUT/torch.jsonl" | tee "$OUT/report.txt"
fi

if [ "${CASE:-0}" = 1 ]; then
  # MLX's own CPU products take minutes a forward at this size: theirs through torch's (--products torch)
  python3 "$ROOT/python/cases/moss_transformer_case.py" case --model "$CKPT" --out "$CASE_OUT" --device "$DEVICE" \
    --products torch 2>&1 | tee "$OUT/case.log"
  "$TOOLS/tf-moss-image" check transformer --model "$CKPT" --case "$CASE_OUT" --device "$DEVICE" 2>&1 |
    tee "$OUT/check.log"
fi
