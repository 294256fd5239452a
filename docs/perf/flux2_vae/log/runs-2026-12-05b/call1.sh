#!/bin/bash
# Device call 1 (run from the repo root): the positions-major TMA convolution (TF_CONV_TMA_TILE) -
# its tests and contract, the small decoder fit against co128 and the decode's first use (with the
# pool reserved beforehand or not); the fused GEMM epilogues against the separate kernels (the
# transformer's forward / guidance / loop step and their hashes); the Python package's CUDA tests and
# its overhead. Makes the random released-geometry pipeline folder in /tmp for the next call.
set -u
tar xJf .carry/rel.tar.xz -C .carry  # rel/ (programs, libraries), py/ (the package)
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
(PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*:CudaWgmmaProduct.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|Ci |tests ran" | head -30
echo "== contract"; timeout 100 $B/tf-kernel-contract --only conv2d --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|red|green" | head -8
wait
echo "== small decoder (1024^2 decode, median of 5, fresh process each)"
for vr in fit:0 fit:4 co128:0; do
  v=${vr%:*} r=${vr#*:}
  echo "-- TF_CONV_TMA_TILE=$v reserve ${r} GiB"
  TF_CONV_TMA_TILE=$v timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 5 --what decode --reserve-gib $r 2>&1 | grep -v "^Flux2\|on NVIDIA" | tee -a $OUT/vae-$v.jsonl
done
TF_CONV_TMA_TILE=fit timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 512,2048 --reps 3 --what decode | tee -a $OUT/vae-fit.jsonl
echo "== ops"; timeout 100 $B/bench_transformer_ops 4196 4196+4196 2>&1 | tee $OUT/ops.txt | grep -E "rate \(|product|norm|attention|situ|residual|four|block" | head -60
echo "== transformer timer (hashes of call 8: forward 358340b47465cfd5, guidance 165d645ae05d741e)"
for v in separate fused; do
  TF_LINEAR_EPILOGUE=$v timeout 120 $B/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 > $OUT/ours-$v.jsonl 2> $OUT/ours-$v.err
  python3 -c "
import json
for l in open('$OUT/ours-$v.jsonl'):
    r = json.loads(l)
    if 'median_ms' in r: print('$v', r['kind'], r['size'], r.get('out_hash'), r['median_ms'], r.get('repeat_identical'))"
done
echo "== python"
PY_PKG=.carry/py BIN=$B OUT=$OUT/py PIPE=$P timeout 150 bench/python_overhead/run.sh 2>&1 | tail -15
