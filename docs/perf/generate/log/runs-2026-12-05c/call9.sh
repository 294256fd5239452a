#!/bin/bash
# Device call 9 (run from the repo root): the whole CUDA test binary (the released-geometry case left
# out) and the whole CUDA kernel contract after today's changes.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== contract"; timeout 70 $B/tf-kernel-contract --backend cuda > $OUT/contract.log 2>&1; echo "exit $?"; grep -E "^SUMMARY|^FAIL" $OUT/contract.log
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='-CudaTransformer.ReleasedGeometryCase' > $OUT/test_cuda.log 2>&1; echo "exit $?"
grep -E "FAILED|PASSED|tests ran" $OUT/test_cuda.log | head -20
