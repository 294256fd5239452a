#!/usr/bin/env bash
# The GPU machine's checks in one call, most important first: the CUDA kernel contract, the CUDA
# tests, per-op kernel times at the released encoder geometry, the FLUX.2 VAE through the family at
# 1024^2 and 2048^2 (random weights saved by diffusers; needs diffusers importable), then
# bench/encoder_vs_torch (ours and transformers in the same run). Binaries are built on the build
# machine (release preset) and carried in BIN; logs land in OUT (at most 8 files come back).
#   BIN=.carry/verify OUT=$OUT TEST_DATA_AT=<the build's tests path> bench/gpu_verify.sh
#   SKIP_VAE=1, SKIP_TORCH=1 leave those parts out; VAE_CHECK=1 adds vae_kernels_check (float64
#   checks of both conv kernels, then the op sequence with wgmma on and off; the binary in BIN),
#   VAE_TORCH=1 bench/vae_vs_torch at 512^2-2048^2, VAE_GATE=1 the 1024^2 reference gate
#   (tf-flux2-vae in BIN; diffusers importable for all three); BUDGET_S=N gives the encoder-against-torch
#   part whatever is left of N seconds (minus 15), so the logs are written before an outer limit.
#   RELEASED_GATE=1 then makes a released-geometry case with transformers on the GPU and runs the
#   reference gate on it; GEMM_COMPARE=1 times the projections with the streaming kernel and with
#   cuBLASLt (TF_GEMM=cublaslt), and the encoder with cuBLASLt (bench_cuda_runtime in BIN).
#   BEFORE=DIR (another build's bench_encoder_timer and bench_vae_cuda) first compares both builds'
#   output hashes and times, alternated in one call (the encoder at 10-4096 tokens, the VAE at
#   512^2-2048^2); TINY_GATES=1 runs the committed tiny cases through the gates on CUDA, each with a
#   planted control that must fail (tf-moss-image, tf-flux2-vae in BIN).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN=$(cd "${BIN:-build/release/bench}" && pwd)
OUT=${OUT:-/tmp/gpu_verify}
WORK=/tmp/gpu_verify_work
export CKPT=${CKPT:-/tmp/moss-random}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv,noheader
# the tests carry the build machine's absolute test-data path
if [ -n "${TEST_DATA_AT:-}" ]; then mkdir -p "$(dirname "$TEST_DATA_AT")" && ln -sfn "$ROOT/tests" "$TEST_DATA_AT"; fi

if [ -n "${BEFORE:-}" ]; then
  echo "== the same bytes as the build in BEFORE: the encoder (hash prefixes), then the VAE"
  [ -f "$CKPT/text_encoder/model.safetensors.index.json" ] ||
    timeout 200 python3 "$HERE/encoder_vs_torch/make_checkpoint_gpu.py" --out "$CKPT" --layers 32 > "$WORK/ckpt.log" 2>&1
  timeout 200 python3 "$HERE/encoder_ab.py" --bench "$BIN/bench_encoder_timer" --model "$CKPT" \
    --counts 10,34,75,127,1024,4096 --rounds 2 before:@"$BEFORE/bench_encoder_timer" after 2>&1 | tee "$OUT/hashes.txt"
  [ -d /tmp/vae-random ] || timeout 90 python3 "$HERE/vae_vs_torch_torch.py" --sizes 256 --precisions bf16 --reps 1 \
    --out /tmp/vae_t.json --save-weights /tmp/vae-random > "$WORK/vae_save.log" 2>&1
  for b in "$BEFORE" "$BIN"; do
    timeout 90 "$b/bench_vae_cuda" --model /tmp/vae-random --sizes 512,1024,2048 --reps 3 2>/dev/null > "$WORK/vae_$(basename "$b").jsonl"
  done
  python3 - "$WORK/vae_$(basename "$BEFORE").jsonl" "$WORK/vae_$(basename "$BIN").jsonl" <<'PY' | tee -a "$OUT/hashes.txt"
import json, sys
runs = [{(r["what"], r["size"]): r for r in map(json.loads, open(p)) } for p in sys.argv[1:]]
for key in sorted(runs[0]):
    a, b = runs[0][key], runs[1].get(key, {})
    print(f"VAE {key[0]} {key[1]}: before {a['median_ms']:.2f} ms, after {b.get('median_ms', float('nan')):.2f} ms, "
          f"bytes {'identical' if a['out_hash'] == b.get('out_hash') else 'DIFFER'} ({a['out_hash']})")
PY
fi

if [ "${TINY_GATES:-0}" = 1 ]; then
  echo "== the committed tiny cases through the gates on CUDA (then a planted control each: must FAIL)"
  D="$ROOT/tests/data"
  for run in "tiny-pipeline moss-image-cases/tiny-default" "moss-tiny-b moss-image-cases/tiny-b-f32-params"; do
    set -- $run
    timeout 60 "$BIN/tf-moss-image" check encoder --model "$D/$1" --case "$D/$2.safetensors" --device cuda 2>&1 | tail -1
    timeout 60 "$BIN/tf-moss-image" check encoder --model "$D/$1" --case "$D/$2.safetensors" --device cuda --plant row 2>&1 | tail -1
  done
  for c in case-32x32 case-48x64; do
    timeout 60 "$BIN/tf-flux2-vae" check --model "$D/tiny-pipeline" --case "$D/vae/$c.safetensors" --device cuda 2>&1 | tail -1
    timeout 60 "$BIN/tf-flux2-vae" check --model "$D/tiny-pipeline" --case "$D/vae/$c.safetensors" --device cuda --plant repeat 2>&1 | tail -1
  done
fi

echo "== kernel contract, CUDA"
timeout 45 "$BIN/tf-kernel-contract" --backend cuda > "$OUT/contract_cuda.log" 2>&1; echo "contract exit $?" | tee -a "$OUT/contract_cuda.log"
grep -E "^(PASS|FAIL|KNOWN)|MISSED|SUMMARY|LIMIT" "$OUT/contract_cuda.log" | cut -c1-200

echo "== CUDA tests"
timeout 75 "$BIN/test_cuda" --gtest_brief=1 > "$OUT/test_cuda.log" 2>&1; echo "test_cuda exit $?" | tee -a "$OUT/test_cuda.log"
grep -E "FAILED|PASSED|Failure|off, first" "$OUT/test_cuda.log" | head -30

echo "== ops at 75 and 4096 tokens"
timeout 45 "$BIN/bench_cuda_ops" 75 4096 > "$OUT/ops.log" 2>&1; cat "$OUT/ops.log"

if [ "${SKIP_VAE:-0}" != 1 ]; then
  echo "== VAE through the family, 1024^2 and 2048^2"
  { timeout 60 python3 "$HERE/vae_vs_torch_torch.py" --sizes 256 --precisions bf16 --reps 1 --out /tmp/vae_t.json \
      --save-weights /tmp/vae-random 2>&1 | grep -v "float32" | tail -3
    timeout 60 "$BIN/bench_vae_cuda" --model /tmp/vae-random --sizes 1024,2048 --reps 3; } > "$OUT/vae.log" 2>&1
  cat "$OUT/vae.log"
  if [ "${VAE_CHECK:-0}" = 1 ]; then
    timeout 200 "$BIN/vae_kernels_check" --sizes 1024 --tiles 64 > "$OUT/vae_check.log" 2>&1; echo "vae_kernels_check exit $?"
    grep -E "FAIL|tile n|^(encode|decode)|^    " "$OUT/vae_check.log"
  fi
  if [ "${VAE_TORCH:-0}" = 1 ]; then
    timeout 300 "$HERE/vae_vs_torch" "$BIN/bench_vae_cuda" "$WORK/vae_vs_torch" 512,1024,2048 3 2>&1 | tail -10 | tee "$OUT/vae_vs_torch.txt"
  fi
  if [ "${VAE_GATE:-0}" = 1 ]; then
    { timeout 150 python3 "$ROOT/python/cases/flux2_vae_case.py" vae --model /tmp/vae-random --height 1024 --width 1024 \
        --ref-device cuda --bf16-device cuda --out "$WORK/vae-case.safetensors" 2>&1 | tail -2
      timeout 90 "$BIN/tf-flux2-vae" check --model /tmp/vae-random --case "$WORK/vae-case.safetensors" --device cuda; } \
      > "$OUT/vae_gate.log" 2>&1
    tail -26 "$OUT/vae_gate.log"
  fi
fi

if [ "${SKIP_TORCH:-0}" != 1 ]; then
  echo "== encoder against torch"
  left=$(( ${BUDGET_S:-100000} - SECONDS - 15 ))
  [ "$left" -gt 300 ] && left=300
  echo "(at most ${left} s)"
  BIN="$BIN" OUT="$WORK" timeout "$left" "$HERE/encoder_vs_torch/run.sh" 2>&1 | grep -v "^  model-"
  cp "$WORK/report.txt" "$WORK/ours.jsonl" "$WORK/torch.jsonl" "$OUT/" 2>/dev/null
fi

if [ "${RELEASED_GATE:-0}" = 1 ]; then
  echo "== reference gate on CUDA, released geometry"
  { timeout 300 python3 "$ROOT/python/cases/moss_image_case.py" encode --model "$CKPT" --out "$WORK/released-case.safetensors" \
      --device cuda --token-counts 10,75 2>&1 | tail -5
    TF_RELEASED_CASE="$WORK/released-case.safetensors" TF_RELEASED_MODEL="$CKPT" timeout 200 "$BIN/test_cuda" \
      --gtest_filter='CudaGate.ReleasedGeometryCase' 2>&1 | grep -vE "^\[ *(RUN|OK) "; } > "$OUT/gate_released.log" 2>&1
  tail -40 "$OUT/gate_released.log"
fi

if [ "${GEMM_COMPARE:-0}" = 1 ]; then
  echo "== projections: streaming kernel, then cuBLASLt"
  { timeout 120 "$BIN/bench_cuda_runtime"; echo "-- TF_GEMM=cublaslt"; TF_GEMM=cublaslt timeout 120 "$BIN/bench_cuda_runtime"; } > "$WORK/gemm.log" 2>&1
  grep -vE "^(cat|upload|peak)" "$WORK/gemm.log" > "$OUT/gemm.log"
  TF_GEMM=cublaslt timeout 120 "$BIN/bench_encoder_timer" --model "$CKPT" --counts 10,34,75,256 --pair 75,10 --reps 9 \
    > "$WORK/ours_cublaslt.jsonl" 2>/dev/null
  python3 "$HERE/encoder_vs_torch/report.py" "$WORK/ours_cublaslt.jsonl" >> "$OUT/gemm.log"; cat "$OUT/gemm.log"
fi
