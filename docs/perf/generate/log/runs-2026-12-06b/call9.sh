#!/bin/bash
# Device call 9 (run from the repo root): the 96-output fixed-pattern loops run a tap row (3 taps) as one group of
# K tiles (one wait for the products to drain a tap row, not a tap): CudaConv tests, conv2d contract, decode
# under TF_CONV_OUTPUTS auto / columns (two rounds), the kernel timeline at 1024^2 (auto), the VAE gate at 1024^2.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== conv tests"; timeout 120 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|OK \]|differ|Ci " | head -30
echo "== conv2d contract"; timeout 60 $B/tf-kernel-contract --only conv2d --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | head -6
wait
echo "== small decoder"
for v in auto columns auto columns; do
  TF_CONV_OUTPUTS=$v timeout 90 $B/bench_vae_cuda --model $P/vae --sizes 512,1024,2048 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA" | sed "s/^/$v /" | tee -a $OUT/vae.jsonl
done
for v in auto; do
  TF_CONV_OUTPUTS=$v CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,14p $OUT/vae-kernels-$v.txt
  rm -f $OUT/vae-kernels.csv
done
echo "== VAE gate 1024^2"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -8
rm -f $OUT/vae-case.safetensors
