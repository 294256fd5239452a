#!/usr/bin/env bash
# Everything the CUDA encoder needs checked on the GPU machine, in one call: the CUDA tests (ops,
# encoder against the CPU, the reference gate on the tiny cases), each op's kernel time at the
# released geometry, bench/encoder_vs_torch/run.sh, the reference gate on a released-geometry case
# made there by python/cases/moss_image_case.py, then the projections and the encoder again with
# TF_GEMM=own (the own narrow/skinny projection kernels) for comparison. Binaries come from the build machine (release preset) in BIN;
# results land in OUT (at most 8 files).
#   BIN=.carry/cudaenc OUT=$OUT TEST_DATA_AT=<the build's tests path> bench/encoder_vs_torch/gpu_session.sh
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$(cd "${BIN:-build/release/bench}" && pwd)
OUT=${OUT:-/tmp/gpu_session}
WORK=/tmp/gpu_session_work
CKPT=${CKPT:-/tmp/moss-random}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv,noheader
# the tests carry the build machine's absolute test-data path; cases not yet in the tree may be carried
if [ -n "${TEST_DATA_AT:-}" ]; then mkdir -p "$(dirname "$TEST_DATA_AT")" && ln -sfn "$ROOT/tests" "$TEST_DATA_AT"; fi
if [ -d "$BIN/moss-image-cases" ] && [ ! -d "$ROOT/tests/data/moss-image-cases" ]; then cp -r "$BIN/moss-image-cases" "$ROOT/tests/data/"; fi

echo "== CUDA tests"
timeout 180 "$BIN/test_cuda" --gtest_brief=1 > "$OUT/test.log" 2>&1; echo "test_cuda exit $?" | tee -a "$OUT/test.log"
grep -E "FAILED|PASSED|Failure|off, first|^PASS|^FAIL" "$OUT/test.log" | head -30

echo "== ops"
timeout 120 "$BIN/bench_cuda_ops" 75 4096 > "$OUT/ops.log" 2>&1; cat "$OUT/ops.log"

echo "== encoder against torch"
BIN="$BIN" OUT="$WORK" CKPT="$CKPT" timeout 420 "$HERE/run.sh" 2>&1 | grep -v "^  model-"
cp "$WORK/report.txt" "$WORK/ours.jsonl" "$WORK/torch.jsonl" "$OUT/" 2>/dev/null

echo "== reference gate on CUDA, released geometry"
{ timeout 300 python3 "$ROOT/python/cases/moss_image_case.py" encode --model "$CKPT" --out "$WORK/released-case.safetensors" \
    --device cuda --token-counts 10,75 2>&1 | tail -5
  TF_RELEASED_CASE="$WORK/released-case.safetensors" TF_RELEASED_MODEL="$CKPT" timeout 200 "$BIN/test_cuda" \
    --gtest_filter='CudaGate.ReleasedGeometryCase' 2>&1 | grep -vE "^\[ *(RUN|OK) "; } > "$OUT/gate_released.log" 2>&1
tail -40 "$OUT/gate_released.log"

echo "== projections: cuBLASLt, then the own kernels"
{ timeout 120 "$BIN/bench_cuda_runtime"; echo "-- TF_GEMM=own"; TF_GEMM=own timeout 120 "$BIN/bench_cuda_runtime"; } > "$WORK/gemm.log" 2>&1
grep -E "^(mlp|qkv|z /|k /|b /|device|-- )" "$WORK/gemm.log" > "$OUT/gemm.log"; cat "$OUT/gemm.log"
echo "== ours with the own projection kernels where they fit"
TF_GEMM=own timeout 120 "$BIN/bench_encoder_timer" --model "$CKPT" --counts 10,34,75,256 --pair 75,10 --reps 15 \
  > "$WORK/ours_own.jsonl" 2>/dev/null
python3 "$HERE/report.py" "$WORK/ours_own.jsonl" >> "$OUT/gemm.log"; tail -8 "$OUT/gemm.log"
