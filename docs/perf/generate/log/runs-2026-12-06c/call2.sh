#!/bin/bash
# Device call 2: after the review's refactor (one single_k_tile<N> for both kernels) the CudaConv tests and
# the decode hashes again; the planted fault (test_cuda_planted: the sub-pixel one-product taps dropped,
# KT1 = 0) must turn CudaConv.SubPixelUpsampleIsWithinTheUpsampledConvolutionsError red.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | grep -E "FAILED|PASSED|OK \]|subpixel" | head -20
echo "== planted"; timeout 150 $B/test_cuda_planted --gtest_filter='CudaConv.SubPixel*' 2>&1 | grep -E "FAILED|PASSED|OK \]|subpixel|Expected|Which is|control" | head -20
wait
for v in subpixel upsampled; do
  TF_CONV_UPSAMPLE=$v timeout 90 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$v /"
done
