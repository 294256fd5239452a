#!/bin/bash
# Device call 10 (run from the repo root): the row tiles (conv_tma_kernel without a split A: the 384- and
# 512-channel convolutions) store through a staged tile and the store warps, as the 96-output kernels do.
# CudaConv / CudaAttention tests, conv2d and attention contracts, decode and encode against the binary of
# the commit before (rel/bench_vae_cuda_before) interleaved in one call, the kernel timeline.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|OK \]|differ" | head -30
echo "== contract"; timeout 90 $B/tf-kernel-contract --only flux2_vae --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-160 | head -14
wait
echo "== decode / encode, new and before"
for round in 1 2; do
  for bin in bench_vae_cuda bench_vae_cuda_before; do
    timeout 90 $B/$bin --model $P/vae --sizes 512,1024 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$bin /" | tee -a $OUT/vae.jsonl
    timeout 60 $B/$bin --model $P/vae --sizes 1024 --reps 5 --what encode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$bin /" | tee -a $OUT/vae.jsonl
    TF_CONV_OUTPUTS=rows timeout 60 $B/$bin --model $P/vae --sizes 1024 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$bin rows /" | tee -a $OUT/vae.jsonl
  done
done
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1; sed -n 3,16p $OUT/vae-kernels.txt; rm -f $OUT/vae-kernels.csv
# (the VAE gate left out: equal output hashes against the binary before, whose bytes passed it in call 9)
