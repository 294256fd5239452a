#!/usr/bin/env bash
# bench/generate_vs_torch: one command on the GPU machine. The whole MOSS-Image picture (1024^2, 50 steps,
# guidance 3), ours (tf-moss-image generate, built with the release preset and carried in BIN) against the
# torch pipeline (torch_pipeline.py: transformers' encoder, kohakumoss's transformer, diffusers' VAE) on one
# random released-geometry pipeline folder (make_pipeline_gpu.py, kept in PIPE), eager and torch.compile;
# then ours at 2048^2; report.py's table. kohakumoss and diffusers come from the wheels in .whl/.
#   BIN=.carry/rel OUT=$OUT bench/generate_vs_torch/run.sh
# Knobs: SIZE (1024), STEPS (50), GUIDANCE (3), SEED (1), PROMPT (text), REPS (3, ours), REPS_TORCH (2, eager),
# REPS_COMPILE (1), IMPLS (eager,compile), COMPILE_BUDGET_S (240), BIG_SIZE (2048), STEPS_2048 (4),
# MM_SIZE (8192), SKIP_OURS, SKIP_TORCH, SKIP_COMPILE, SKIP_BIG (=1 to leave a part out), PIPE
# (/tmp/moss-pipeline-random; tests/data/tiny-pipeline for a CPU test), DEVICE (cuda), WHEELS (.whl), PY (python3).
# CPU test: DEVICE=cpu PIPE=tests/data/tiny-pipeline SIZE=64 STEPS=8 BIG_SIZE=96 STEPS_2048=2 MM_SIZE=256 \
#           BIN=build/cpu/tools SKIP_COMPILE=1 bench/generate_vs_torch/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$(cd "${BIN:-build/release/tools}" && pwd)
OUT=${OUT:-/tmp/generate_vs_torch}
PIPE=${PIPE:-/tmp/moss-pipeline-random}
DEVICE=${DEVICE:-cuda}
WHEELS=${WHEELS:-$ROOT/.whl}
PY=${PY:-python3}
SIZE=${SIZE:-1024}
STEPS=${STEPS:-50}
GUIDANCE=${GUIDANCE:-3}
SEED=${SEED:-1}
BIG_SIZE=${BIG_SIZE:-2048}
IMPLS=${IMPLS:-eager,compile}
PROMPT=${PROMPT:-"A photograph of a tabby cat sitting on a sunlit windowsill, shallow depth of field."}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
T0=$(date +%s)
stamp() { echo "run.sh: $1 at +$(($(date +%s) - T0)) s" | tee -a "$OUT/timeline.txt" >&2; }

if compgen -G "$WHEELS/*.whl" > /dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$WHEELS"/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
"$PY" -c "import kohakumoss, diffusers" 2> /dev/null || {
  echo "run.sh: kohakumoss or diffusers is not importable; carry their wheels:" \
    "pip download --no-deps kohakumoss==0.1.0 diffusers==0.42.1 -d .whl" >&2
  exit 1
}
stamp "wheels"

if [ ! -f "$PIPE/model_index.json" ]; then
  "$PY" "$HERE/make_pipeline_gpu.py" --out "$PIPE" --device "$DEVICE" 2>&1 | tee "$OUT/pipeline.log"
  stamp "pipeline folder made"
fi
printf '%s' "$PROMPT" > "$OUT/prompt.txt"

ours() {  # ours SIDE STEPS REP TAG
  local err="$OUT/ours-$4.err"
  "$BIN/tf-moss-image" generate --model "$PIPE" --prompt-file "$OUT/prompt.txt" --width "$1" --height "$1" \
    --steps "$2" --guidance "$GUIDANCE" --seed "$SEED" --device "$DEVICE" --out "$OUT/ours-$1.png" 2> "$err" ||
    echo "run.sh: tf-moss-image generate at $1 failed (exit $?); $err" >&2
  tail -n 1 "$err" >&2
  "$PY" "$HERE/report.py" ours-line "$err" --rep "$3" >> "$OUT/ours.jsonl" || true
}

if [ "${SKIP_OURS:-0}" != 1 ]; then
  : > "$OUT/ours.jsonl"
  for ((r = 0; r < ${REPS:-3}; r++)); do ours "$SIZE" "$STEPS" "$r" "$SIZE-$r"; done
  stamp "ours at $SIZE"
fi

torch_run() {  # torch_run IMPL REPS EXTRA...
  local impl=$1 reps=$2
  shift 2
  "$PY" "$HERE/torch_pipeline.py" --model "$PIPE" --prompt-file "$OUT/prompt.txt" --width "$SIZE" --height "$SIZE" \
    --steps "$STEPS" --guidance "$GUIDANCE" --seed "$SEED" --impl "$impl" --device "$DEVICE" \
    --out "$OUT/torch-$impl-$SIZE.png" --reps "$reps" --json "$@" \
    >> "$OUT/torch.jsonl" 2> >(tee "$OUT/torch-$impl.err" >&2) ||
    echo "run.sh: torch_pipeline.py --impl $impl failed (exit $?)" >&2
}

if [ "${SKIP_TORCH:-0}" != 1 ]; then
  : > "$OUT/torch.jsonl"
  if [[ ",$IMPLS," == *,eager,* ]]; then
    torch_run eager "${REPS_TORCH:-2}" --vae-bf16 --mm-size "${MM_SIZE:-8192}"
    stamp "torch eager"
  fi
  if [[ ",$IMPLS," == *,compile,* ]] && [ "${SKIP_COMPILE:-0}" != 1 ]; then
    torch_run compile "${REPS_COMPILE:-1}" --compile-budget-s "${COMPILE_BUDGET_S:-240}"
    stamp "torch compile"
  fi
fi

if [ "${SKIP_BIG:-0}" != 1 ] && [ "${SKIP_OURS:-0}" != 1 ]; then
  ours "$BIG_SIZE" "${STEPS_2048:-4}" 0 "$BIG_SIZE"
  stamp "ours at $BIG_SIZE"
fi

touch "$OUT/ours.jsonl" "$OUT/torch.jsonl"
"$PY" "$HERE/report.py" table "$OUT/ours.jsonl" "$OUT/torch.jsonl" --model "$PIPE" --size "$SIZE" \
  --png-ours "$OUT/ours-$SIZE.png" --png-torch "$OUT/torch-eager-$SIZE.png" | tee "$OUT/report.txt"
stamp "done"
