#!/bin/bash
# Device call 2 (run from the repo root, after call 1 on the same warm machine): the whole picture, ours
# (bench/generate_vs_torch/run.sh, 1024^2, 50 steps, guidance 3; the defaults) against torch eager.
set -u
[ -d .carry/rel ] || tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== generate"
BIN=$B OUT=$OUT/gen REPS=${REPS:-3} REPS_TORCH=1 IMPLS=eager SKIP_BIG=1 timeout ${GEN_S:-560} bench/generate_vs_torch/run.sh 2>&1 | grep -v "^\[transformers\]\|There are modules" | tail -30
