#!/bin/bash
# Device call 2 (run from the repo root, after call 1 on the same warm machine, with the defaults call 1 chose): the whole picture, ours
# (bench/generate_vs_torch/run.sh, 1024^2, 50 steps, guidance 3) against torch eager in the same call.
set -u
tar xJf .carry/rel.tar.xz -C .carry; tar xJf .carry/gen.tar.xz -C .carry
B=$PWD/.carry/rel
export TF_GROUP_NORM_STATS=${STATS:-epilogue} TF_CONV_FEW_OUTPUTS=${FEW:-picture}
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== generate"
BIN=$B OUT=$OUT/gen REPS=${REPS:-3} REPS_TORCH=1 IMPLS=eager SKIP_BIG=1 timeout ${GEN_S:-420} bench/generate_vs_torch/run.sh 2>&1 | grep -v "^\[transformers\]\|There are modules" | tail -30
