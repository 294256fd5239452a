#!/bin/bash
# Written in session 2026-12-07h, which got no device (refused starts, then loans paused): the call that checks and
# times v28-v30, all opt-in. .carry/h14/new: a release build of main: the softmax by tiles (TF_SOFTMAX_ROWS=tiles, e
# through staging rows; `tiles_pairs` as pairs from the fragments), the resnet shortcut beside conv1
# (TF_CONV_SHORTCUT=beside), the weights reordered once at load (TF_CONV_WEIGHTS=prepared); h14/fault/test_cuda: the
# scores' tile maximum per lane (no quad shuffles), the raw split's hi and lo swapped, the prepared tap-major weights
# unpadded (all three must go red).
source bench/device_preamble.sh .carry/h14.tar.xz .carry/h14/new
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaAttention.*:CudaConv.TmaKernel*:CudaConv.ConvolutionBeside*:CudaConv.Folded*:CudaConv.Prepared*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|tiles|^\[==" | head -14
echo "== planted faults: must go red"; timeout 60 $PWD/.carry/h14/fault/test_cuda --gtest_filter='CudaAttention.SoftmaxByTiles*:CudaConv.ConvolutionBeside*:CudaConv.Prepared*' 2>&1 | grep -E "FAILED|PASSED" | head -8
echo "== contract (resident, then tiles)"
timeout 60 $B/tf-kernel-contract --only attention_f32_channels --backend cuda 2>&1 | tail -1 | cut -c1-300
TF_SOFTMAX_ROWS=tiles timeout 60 $B/tf-kernel-contract --only attention_f32_channels --backend cuda 2>&1 | tail -3 | cut -c1-300
wait
echo "== decode A/B"
run() {  # label, env, sizes
  env $2 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $3 --reps 5 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
}
ALL="TF_SOFTMAX_ROWS=tiles TF_CONV_SHORTCUT=beside TF_CONV_WEIGHTS=prepared"
run all "$ALL" 512,1024,2048
run base "X=1" 512,1024,2048
run all "$ALL" 1024; run base "X=1" 1024; run tiles "TF_SOFTMAX_ROWS=tiles" 1024; run pairs "TF_SOFTMAX_ROWS=tiles_pairs" 1024
run beside "TF_CONV_SHORTCUT=beside" 1024; run prepared "TF_CONV_WEIGHTS=prepared" 1024; run all "$ALL" 1024; run base "X=1" 1024
echo "== VAE gate 1024^2 (all three)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
env $ALL timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
env $ALL CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-all.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-all.csv --eager --last 1 > $OUT/vae-kernels-all.txt 2>&1
sed -n 3,24p $OUT/vae-kernels-all.txt; xz -9 $OUT/vae-kernels-all.csv
