#!/usr/bin/env bash
# bench/generate_vs_torch: one command on the GPU machine. The whole-pipeline reference gate
# (tf-moss-image check pipeline) at the released geometry with random weights: makes the random pipeline
# folder (make_pipeline_gpu.py, kept in PIPE) if absent, writes the case with python/cases/moss_pipeline_case.py
# on CUDA (float32 run: the float32 encoder, kohakumoss's float32 transformer with TF32 off; bf16 run: the bf16
# encoder and kohakumoss's bf16 inference path; --self-checks torch-only, as mlx is not there), then gates ours
# on it and checks that the planted picture fails (exit 1). kohakumoss, diffusers and moss-image-mlx (its numpy
# schedule and noise replica only) come from the wheels in .whl/.
#   BIN=.carry/rel OUT=$OUT bench/generate_vs_torch/released_case.sh
# Knobs: SIZE (256), STEPS (6), SEEDS (42,7,1234,2026), GATED (0,1), PIPE (/tmp/moss-pipeline-random), DEVICE (cuda),
# WHEELS (.whl), PY (python3), SKIP_PLANT (=1 to leave the planted run out).
# Exit status: 0 when the case was written, the gate passed and the planted picture failed; 1 otherwise.
# CPU test (the tiny pipeline; the case tool's python parts and the gate program):
#   DEVICE=cpu PIPE=tests/data/tiny-pipeline SIZE=32 BIN=build/cpu/tools PY=/tmp/refs-venv/bin/python \
#     bench/generate_vs_torch/released_case.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$(cd "${BIN:-build/release/tools}" && pwd)
OUT=${OUT:-/tmp/released_case}
PIPE=${PIPE:-/tmp/moss-pipeline-random}
DEVICE=${DEVICE:-cuda}
WHEELS=${WHEELS:-$ROOT/.whl}
PY=${PY:-python3}
SIZE=${SIZE:-256}
STEPS=${STEPS:-6}
SEEDS=${SEEDS:-42,7,1234,2026}
GATED=${GATED:-0,1}
CASE=$OUT/released-case.safetensors
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
T0=$(date +%s)
stamp() { echo "released_case.sh: $1 at +$(($(date +%s) - T0)) s ($(date -u +%H:%M:%S))" | tee -a "$OUT/timeline.txt" >&2; }
stamp "start"

if compgen -G "$WHEELS/*.whl" > /dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$WHEELS"/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# moss_image_mlx is only looked up (its scheduler.py and torch_randn.py are numpy files); mlx is never imported
"$PY" -c "import importlib.util as u, kohakumoss, diffusers; assert u.find_spec('moss_image_mlx')" 2> /dev/null || {
  echo "released_case.sh: kohakumoss, diffusers or moss_image_mlx is missing; carry their wheels:" \
    "pip download --no-deps kohakumoss==0.1.0 diffusers==0.42.1 moss-image-mlx==0.2.0 -d .whl" >&2
  exit 1
}
stamp "wheels"

if [ ! -f "$PIPE/model_index.json" ]; then
  "$PY" "$HERE/make_pipeline_gpu.py" --out "$PIPE" --device "$DEVICE" 2>&1 | tee "$OUT/pipeline.log"
  stamp "pipeline folder made"
fi

# 4 seeds x the 2 default prompts = 8 runs (the issue's average and worst) at SIZE^2, STEPS steps, guidance 3; runs 0 and 1 gated per step
"$PY" "$ROOT/python/cases/moss_pipeline_case.py" --model "$PIPE" --out "$CASE" --device "$DEVICE" \
  --bf16-reference kohakumoss --self-checks torch-only --width "$SIZE" --height "$SIZE" --steps "$STEPS" \
  --seeds "$SEEDS" --gated-runs "$GATED" --template-mismatch note 2>&1 | grep -v "^\[transformers\]" | tee "$OUT/case.log"
stamp "case written"

status=0
set +e
"$BIN/tf-moss-image" check pipeline --model "$PIPE" --case "$CASE" --device "$DEVICE" 2>&1 | tee "$OUT/gate.log"
gate=${PIPESTATUS[0]}
stamp "gate (exit $gate)"
[ "$gate" -eq 0 ] || status=1
if [ "${SKIP_PLANT:-0}" != 1 ]; then
  "$BIN/tf-moss-image" check pipeline --model "$PIPE" --case "$CASE" --device "$DEVICE" --plant picture \
    > "$OUT/plant-picture.log" 2>&1
  plant=$?
  tail -n 1 "$OUT/plant-picture.log"
  stamp "planted picture (exit $plant, must be 1)"
  [ "$plant" -eq 1 ] || status=1
fi
set -e
echo "released_case.sh: gate exit $gate${plant+, planted picture exit $plant}; $([ $status -eq 0 ] && echo ok || echo FAILED)" |
  tee -a "$OUT/timeline.txt"
exit $status
