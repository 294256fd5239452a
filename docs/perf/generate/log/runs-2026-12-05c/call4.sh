#!/bin/bash
# Device call 4 (run from the repo root): the released-geometry pipeline case again, its gate now also
# printing each gated run's picture from our transformer and VAE on the float32 encoder's rows, beside
# torch bf16's transformer alone: which of the encoder and the transformer leaves the PSNR short.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
nvidia-smi --query-gpu=name --format=csv,noheader
BIN=$B OUT=$OUT/case timeout 400 bench/generate_vs_torch/released_case.sh 2>&1 | grep -v "^r[0-9].s[0-9]" | tail -16
