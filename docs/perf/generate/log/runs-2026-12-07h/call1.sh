#!/bin/bash
# Session 2026-12-07h, device call 1. .carry/h12/new: a release build of the softmax by tiles (TF_SOFTMAX_ROWS=tiles,
# the default; `resident` the softmax pass it replaces, in the same binary); h12/fault/test_cuda: the scores' tile
# maximum taken per lane, without the quad's shuffles (must go red).
source bench/device_preamble.sh .carry/h12.tar.xz .carry/h12/new
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaAttention.*:CudaConv.TmaKernel*:CudaConv.FewOutputs*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|tiles|^\[==" | head -14
echo "== planted fault: must go red"; timeout 60 $PWD/.carry/h12/fault/test_cuda --gtest_filter='CudaAttention.SoftmaxByTiles*' 2>&1 | grep -E "FAILED|PASSED|tiles " | head -4
echo "== contract"; timeout 60 $B/tf-kernel-contract --only attention_f32_channels --backend cuda 2>&1 | tail -3 | cut -c1-300
wait
echo "== decode A/B"
run() {  # label, env, sizes
  env $2 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $3 --reps 5 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
}
run tiles "X=1" 512,1024,2048
run resident "TF_SOFTMAX_ROWS=resident" 512,1024,2048
for _ in 1 2; do run tiles "X=1" 1024; run resident "TF_SOFTMAX_ROWS=resident" 1024; done
echo "== VAE gate 1024^2 (tiles)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-tiles.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-tiles.csv --eager --last 1 > $OUT/vae-kernels-tiles.txt 2>&1
sed -n 3,24p $OUT/vae-kernels-tiles.txt; xz -9 $OUT/vae-kernels-tiles.csv
