#!/bin/bash
# Device call 1 (run from the repo root, commit 30fb6cc): the cleanup's GPU check (call3.sh of
# runs-2026-12-07, never run): CUDA tests, the flux2_vae contract, the small decoder's hashes (expected
# 512^2 319a8e4b7e07919a, 1024^2 bc57c21ec1997664, 2048^2 e2918491330be71a) and times; the transformer's
# forward and guidance step at 1024^2 (bench_transformer_timer); the VAE gate at 1024^2; the kernel timeline.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*' 2>&1 | tee $OUT/test_cuda.log | grep -E "FAILED|PASSED|Failure|Expected|Which is|^\[==" | head -20
echo "== contract"; timeout 90 $B/tf-kernel-contract --only flux2_vae --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-160 | head -8
wait
echo "== decode"
for s in 512,1024,2048 1024; do timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $s --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | tee -a $OUT/vae.jsonl; done
echo "== transformer"
timeout 150 $B/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 > $OUT/ours.jsonl 2> $OUT/ours.err; tail -4 $OUT/ours.jsonl | cut -c1-400
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1; sed -n 3,24p $OUT/vae-kernels.txt; rm -f $OUT/vae-kernels.csv
echo "== VAE gate 1024^2"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -6
rm -f $OUT/vae-case.safetensors
