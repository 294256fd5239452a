#!/bin/bash
# Device call 1 (run from the repo root): the nearest 2x upsample + 3x3 convolutions as sub-pixel classes
# (TF_CONV_UPSAMPLE=subpixel, the default) against the upsampled picture's convolution (=upsampled, the
# previous path) in the same binary, interleaved; CudaConv / CudaAttention tests, the flux2_vae contract,
# the kernel timeline, the VAE gate at 1024^2 (the decoder's bytes change).
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|OK \]|differ|subpixel" | head -40
echo "== contract"; timeout 90 $B/tf-kernel-contract --only flux2_vae --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-160 | head -14
wait
echo "== decode / encode, subpixel and upsampled"
for round in 1 2; do
  for v in subpixel upsampled; do
    TF_CONV_UPSAMPLE=$v timeout 90 $B/bench_vae_cuda --model $P/vae --sizes 512,1024,2048 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$v /" | tee -a $OUT/vae.jsonl
  done
done
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1; sed -n 3,20p $OUT/vae-kernels.txt; rm -f $OUT/vae-kernels.csv
echo "== VAE gate 1024^2"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -8
rm -f $OUT/vae-case.safetensors
