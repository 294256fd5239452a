#!/bin/bash
# Written in session 2026-12-08 (not run: device loans paused after call 0). v33 (TF_GROUP_STATS=rows|all: the row
# tiles' consumers, and with `all` the halo tiles' too, take GroupNorm statistics from their registers, log v33): its
# CUDA test and a planted fault (a halo slab counted whole), the contracts in each mode, decode A/B at 1024^2
# (defaults = pass, rows, all, all + beside) interleaved, 512^2 and 2048^2 once, the gate with all, its timeline.
# Carry: bash docs/perf/generate/log/runs-2026-12-08/make_carry.sh, then carry [".carry/h18.tar.xz", ".whl"].
source bench/device_preamble.sh .carry/h18.tar.xz .carry/h18/new
echo "== group stats test"; timeout 120 $B/test_cuda --gtest_filter='CudaGroupStats.*' 2>&1 | grep -E "Failure|OK \]|FAILED \]" | head -8
echo "== planted: a slab counted whole (must fail)"; timeout 120 $B/test_cuda_planted --gtest_filter='CudaGroupStats.*' 2>&1 | grep -oE "epilogue, [^,]*|FAILED \]|OK \]" | sort | uniq -c | head -6
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*:CudaOps.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|^\[==" | head -10
echo "== contract"; for v in pass rows all; do for k in conv2d_group_stats group_norm conv2d; do
  TF_GROUP_STATS=$v timeout 100 $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL" | cut -c1-220 | sed "s/^/$v $k: /"; done; done
wait
run() {  # label, env, sizes
  env $2 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $3 --reps 5 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
}
EP="TF_GROUP_STATS=all"
echo "== decode A/B"
run all "$EP" 512,1024,2048
run base "X=1" 512,2048
for _ in 1 2 3; do run base "X=1" 1024; run rows "TF_GROUP_STATS=rows" 1024; run all "$EP" 1024; run all_beside "$EP TF_CONV_SHORTCUT=beside" 1024; done
echo "== VAE gate 1024^2 (all)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
TF_GROUP_STATS=all timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
TF_GROUP_STATS=all CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1
sed -n 3,26p $OUT/vae-kernels.txt; xz -9 $OUT/vae-kernels.csv
