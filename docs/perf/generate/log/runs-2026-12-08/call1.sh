#!/bin/bash
# Written in session 2026-12-08 (not run: device loans paused after call 0). v33 (TF_GROUP_STATS=rows|all: the row
# tiles' consumers, and with `all` the halo tiles' too, take GroupNorm statistics from their registers, log v33): its
# CUDA test and two planted faults (a halo slab counted whole; row tiles taken as wholly inside), the contracts in
# each mode, decode A/B at 1024^2 (defaults = pass, rows, all, all + beside) interleaved, 512^2 and 2048^2 once, the
# gate with all, its timeline.
# Carry: bash docs/perf/generate/log/runs-2026-12-08/make_carry.sh, then carry [".carry/h18.tar.xz", ".whl"].
source bench/device_preamble.sh .carry/h18.tar.xz .carry/h18/new
echo "== group stats test"; timeout 120 $B/test_cuda --gtest_filter='CudaGroupStats.*' 2>&1 | grep -E "Failure|OK \]|FAILED \]" | head -8
for f in halo rows; do echo "== planted $f (must fail)"; timeout 120 $B/test_cuda_planted_$f --gtest_filter='CudaGroupStats.*' 2>&1 | grep -oE "epilogue, [^,]*|FAILED \]|OK \]" | sort | uniq -c | head -6; done
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*:CudaOps.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|^\[==" | head -10
echo "== contract"; for v in pass rows all; do for k in conv2d_group_stats group_norm conv2d; do
  TF_GROUP_STATS=$v timeout 100 $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL" | cut -c1-220 | sed "s/^/$v $k: /"; done; done
wait
EP="TF_GROUP_STATS=all"
echo "== decode A/B"
vae_decode all "$EP" 512,1024,2048
vae_decode base "X=1" 512,2048
for _ in 1 2 3; do vae_decode base "X=1" 1024; vae_decode rows "TF_GROUP_STATS=rows" 1024; vae_decode all "$EP" 1024; vae_decode all_beside "$EP TF_CONV_SHORTCUT=beside" 1024; done
echo "== VAE gate 1024^2 (all)"
vae_gate_and_timeline "TF_GROUP_STATS=all"
