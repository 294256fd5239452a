#!/bin/bash
# Device call 5: the wgmma product (tests, contract), the sampling loop's tests, the ops bench, the Python package on CUDA.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
D=tests/data
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader; python3 --version
echo "== tests"; timeout 240 $B/test_cuda --gtest_filter='CudaWgmmaProduct.*:CudaTransformer.*:CudaConv*' 2>&1 | grep -E "OK \]|FAILED|PASSED|Failure|Expected|Which is|of [0-9]+ values|SKIPPED|tests ran|x [0-9]+ x" | head -60
echo "== contract"
for k in linear "linear_gated_product (situ)" "linear_gated_product (silu)"; do
  for v in separate fused; do echo "-- $k TF_LINEAR_EPILOGUE=$v TF_GEMM=wgmma"; TF_LINEAR_EPILOGUE=$v TF_GEMM=wgmma timeout 100 $B/tf-kernel-contract --only "$k" --backend cuda 2>&1 | grep -E "SUMMARY|FAIL|PASS|control|worst|max" | head -12; done
done
for k in transpose_to_bf16 guided_euler_step; do $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "SUMMARY|FAIL" | head -4; done
echo "== ops"; timeout 150 $B/bench_transformer_ops 4196 4196+4196 2>&1 | tail -48
echo "== python"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/pytest-*.whl .whl/pluggy-*.whl .whl/iniconfig-*.whl 2>&1 | tail -1
(cd tests/python && PYTHONPATH=$PWD/../../.carry/py:/tmp/site timeout 120 python3 -m pytest -q -rs -p no:cacheprovider test_cuda.py 2>&1 | tail -15)
