#!/bin/bash
# Device call 5 (run from the repo root): after the review's host-side refactors (one persistent launch for
# both TMA product kernels; the split-products test's bytes helper): the split-product tests (convolutions
# and the channels attention) and the conv2d / attention_f32_channels contract.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|Failure|OK \]" | head -20
for k in conv2d attention_f32_channels; do timeout 40 $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^PASS|^FAIL|^SUMMARY" | cut -c1-160; done
