#!/bin/bash
# Device call 1 (run from the repo root): the runtime's memory check that no longer trims the pool
# (its test), the Python package's CUDA tests and overhead against bench_python_peer, the small
# decoder's kernel timeline at 1024^2, the transformer timer. Makes the random released-geometry
# pipeline folder in /tmp for call 2.
set -u
tar xJf .carry/rel.tar.xz -C .carry  # rel/ (programs, libraries), py/ (the package)
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
(PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 120 $B/test_cuda --gtest_filter='CudaRuntime.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|tests ran" | head -20
wait
echo "== python"
PY_PKG=.carry/py BIN=$B OUT=$OUT/py PIPE=$P timeout 200 bench/python_overhead/run.sh 2>&1 | tail -12
echo "== small decoder timeline (1024^2 decode)"
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode 2>&1 | grep -v "^Flux2"
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 | head -45
timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 7 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA"
echo "== transformer timer"
timeout 150 $B/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 > $OUT/ours.jsonl 2> $OUT/ours.err
python3 -c "
import json
for l in open('$OUT/ours.jsonl'):
    r = json.loads(l)
    if 'median_ms' in r: print(r['kind'], r['size'], r.get('out_hash'), r['median_ms'], r.get('repeat_identical'))"
