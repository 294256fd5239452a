#!/bin/bash
# Written at the end of session 2026-12-07h for the next device call (not run): .carry/h16/new, a release build of
# a5b3a46 (the fault build: 2d00ee0) (defaults: TF_SOFTMAX_ROWS=tiles, TF_CONV_WEIGHTS=prepared; TF_CONV_SHORTCUT=beside opt-in);
# h16/fault/test_cuda: the tile max per lane, the raw split's hi and lo swapped, the prepared weights unpadded.
# First the beside test's diagnostics (does the separate path repeat itself? outputs unwritten?), then the new
# defaults timed against the old ones and with beside, the hashes (tiles at 1024^2: 19b1588c931e956e), the gate.
source bench/device_preamble.sh .carry/h16.tar.xz .carry/h16/new
echo "== beside"; timeout 60 $B/test_cuda --gtest_filter='CudaConv.ConvolutionBeside*' --gtest_repeat=3 2>&1 | grep -E "Failure|differs|main,|beside,|OK \]|FAILED \]" | head -20
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaAttention.*:CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|^\[==" | head -10
echo "== planted faults: must go red"; timeout 60 $PWD/.carry/h16/fault/test_cuda --gtest_filter='CudaAttention.SoftmaxByTiles*:CudaConv.ConvolutionBeside*:CudaConv.Prepared*' 2>&1 | grep -E "FAILED \]|PASSED" | head -6
echo "== contract"; for k in attention_f32_channels conv2d; do
  timeout 60 $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL" | cut -c1-300; done
wait
run() {  # label, env, sizes
  env $2 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $3 --reps 5 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
}
OLD="TF_SOFTMAX_ROWS=resident TF_CONV_WEIGHTS=per_call"
echo "== decode A/B"
run new "X=1" 512,1024,2048
run old "$OLD" 512,1024,2048
for _ in 1 2 3; do run new "X=1" 1024; run old "$OLD" 1024; run beside "TF_CONV_SHORTCUT=beside" 1024; done
echo "== VAE gate 1024^2 (defaults)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
