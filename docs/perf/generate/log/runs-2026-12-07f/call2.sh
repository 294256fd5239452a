#!/bin/bash
# Session 2026-12-07f, device call 2 (from the repo root; .carry/h5/new: a release build of main with v23,
# .carry/h5/fault/test_cuda: the same with staged_sum leaving the residual out, must go red). TF_CONV_RESIDUAL
# loaded / staged interleaved; the bytes must not change (hashes 319a8e4b7e07919a, bc57c21ec1997664,
# e2918491330be71a); CudaConv tests and the planted fault; kernel timelines loaded / staged; the conv2d and
# flux2_vae contracts and the VAE gate at 1024^2 with staged; the whole picture (ours) loaded / staged.
source bench/device_preamble.sh .carry/h5.tar.xz .carry/h5/new
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
echo "== planted (the residual left out of staged_sum): must go red"; timeout 100 $PWD/.carry/h5/fault/test_cuda --gtest_filter='CudaConv.StagedResidual*' 2>&1 | grep -E "FAILED|PASSED|OK \]|differ" | head -6
wait
echo "== decode loaded / staged, interleaved"
for run in "loaded 512,1024,2048" "staged 512,1024,2048" "loaded 1024" "staged 1024" "loaded 1024" "staged 1024" "loaded 1024" "staged 1024"; do
  set -- $run
  TF_CONV_RESIDUAL=$1 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 7 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in loaded staged; do
  TF_CONV_RESIDUAL=$v CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,16p $OUT/vae-kernels-$v.txt
  mv $OUT/vae-kernels.csv $OUT/vae-kernels-$v.csv
done
echo "== contracts (staged)"; for o in conv2d flux2_vae; do TF_CONV_RESIDUAL=staged timeout 90 $B/tf-kernel-contract --only $o --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-160 | head -4; done
echo "== VAE gate 1024^2 (staged)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
TF_CONV_RESIDUAL=staged timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -6
rm -f $OUT/vae-case.safetensors
echo "== whole picture (ours): loaded, staged"
for v in loaded staged; do TF_CONV_RESIDUAL=$v BIN=$B OUT=$OUT/generate-$v SKIP_TORCH=1 SKIP_COMPILE=1 SKIP_BIG=1 REPS=2 \
  timeout 120 bench/generate_vs_torch/run.sh 2>&1 | grep -iE "total|picture|ours" | tail -4; done
