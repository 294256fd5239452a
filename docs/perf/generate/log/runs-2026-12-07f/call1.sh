#!/bin/bash
# Session 2026-12-07f, device call 1 (from the repo root; .carry/h4/new: a release build of main with v22 and
# its 192-output extension; .carry/h4/diag: bench_vae_cuda + libtf_kernel_timeline.so with `return;` first in
# store_staged and store_cols, outputs left unwritten, never committed). TF_CONV_RESIDUAL_PREFETCH none / l2
# interleaved; the bytes must not change (hashes 319a8e4b7e07919a, bc57c21ec1997664, e2918491330be71a); CudaConv
# tests; kernel timelines none / l2 / diag (the kernels' time without their epilogues' stores); VAE gate at
# 1024^2 with l2; the whole picture (ours) none / l2.
source bench/device_preamble.sh .carry/h4.tar.xz .carry/h4/new
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
wait
echo "== decode none / l2, interleaved"
for run in "none 512,1024,2048" "l2 512,1024,2048" "none 1024" "l2 1024" "none 1024" "l2 1024" "none 1024" "l2 1024"; do
  set -- $run
  TF_CONV_RESIDUAL_PREFETCH=$1 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 7 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in none l2 diag; do
  D=$B; [ $v = diag ] && D=$PWD/.carry/h4/diag
  TF_CONV_RESIDUAL_PREFETCH=${v/diag/none} CUDA_INJECTION64_PATH=$D/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$D:$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $D/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,16p $OUT/vae-kernels-$v.txt
  rm -f $OUT/vae-kernels.csv
done
echo "== VAE gate 1024^2 (l2)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
TF_CONV_RESIDUAL_PREFETCH=l2 timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -6
rm -f $OUT/vae-case.safetensors
echo "== whole picture (ours): none, l2"
for v in none l2; do TF_CONV_RESIDUAL_PREFETCH=$v BIN=$B OUT=$OUT/generate-$v SKIP_TORCH=1 SKIP_COMPILE=1 SKIP_BIG=1 REPS=2 \
  timeout 120 bench/generate_vs_torch/run.sh 2>&1 | grep -iE "total|picture|ours" | tail -4; done
