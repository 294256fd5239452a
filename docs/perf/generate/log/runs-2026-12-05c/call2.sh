#!/bin/bash
# Device call 2 (run from the repo root, after call 1 on the same machine): the whole picture, ours
# (bench/generate_vs_torch/run.sh, 1024^2, 50 steps), then the released-geometry pipeline case
# (released_case.sh) when PART=all. EPI sets TF_LINEAR_EPILOGUE (the default when unset).
set -u
tar xJf .carry/rel.tar.xz -C .carry  # rel/ (programs, libraries), py/ (the package)
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
[ -n "${EPI:-}" ] && export TF_LINEAR_EPILOGUE=$EPI
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== generate"
BIN=$B OUT=$OUT/gen REPS=${REPS:-3} REPS_TORCH=1 IMPLS=eager SKIP_BIG=${SKIP_BIG:-1} timeout ${GEN_S:-400} bench/generate_vs_torch/run.sh 2>&1 | grep -v "^\[transformers\]\|There are modules" | tail -30
if [ "${PART:-all}" = all ]; then
  echo "== released case"
  BIN=$B OUT=$OUT/case timeout ${CASE_S:-180} bench/generate_vs_torch/released_case.sh 2>&1 | tail -25
fi
