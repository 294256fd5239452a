#!/bin/bash
# Session 2026-12-07g, device call 1 (the prepared runs-2026-12-07f/call6.sh plus the VAE gate). .carry/h9/new:
# a release build of main 792a472 (the review's tile_place / one store_staged, never run on a GPU; v25
# TF_CONV_SUBPIXEL_192); h9/fault/test_cuda: store_staged_strided's `map.col` taken as 1 (must go red).
# Tests first, then columns / halves interleaved (hashes 319a8e4b7e07919a, bc57c21ec1997664, e2918491330be71a),
# timelines, the VAE gate at 1024^2 with the default.
source bench/device_preamble.sh .carry/h9.tar.xz .carry/h9/new
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
echo "== planted fault: must go red"; timeout 100 $PWD/.carry/h9/fault/test_cuda --gtest_filter='CudaConv.SubPixelHalves*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4
wait
echo "== decode columns / halves, interleaved"
bench/cuda/vae_decode_ab.sh $B $P/vae $OUT TF_CONV_SUBPIXEL_192 columns halves
for f in $OUT/vae-kernels-*.csv; do xz -9 $f; done
echo "== VAE gate 1024^2"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
