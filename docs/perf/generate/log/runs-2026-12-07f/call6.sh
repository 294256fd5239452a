#!/bin/bash
# Prepared in session 2026-12-07f for the next one (its device time was spent): v25, TF_CONV_SUBPIXEL_192
# columns / halves interleaved in one binary. Needs a release build of main (after e74d862) in .carry/h9/new
# (bench_vae_cuda, test_cuda, libtf_kernel_timeline.so) and .whl; optional .carry/h9/fault/test_cuda built
# with store_staged_strided's `map.col` taken as 1 (must go red). The tests come first: the store warps' loop
# was restructured after the last GPU run (tile_place, one store_staged), so the CudaConv tests and the bytes
# (hashes 319a8e4b7e07919a, bc57c21ec1997664, e2918491330be71a with `columns`) are its first check.
source bench/device_preamble.sh .carry/h9.tar.xz .carry/h9/new
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
[ -x $PWD/.carry/h9/fault/test_cuda ] && { echo "== planted fault: must go red"; timeout 100 $PWD/.carry/h9/fault/test_cuda --gtest_filter='CudaConv.SubPixelHalves*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4; }
wait
echo "== decode columns / halves, interleaved"
bench/cuda/vae_decode_ab.sh $B $P/vae $OUT TF_CONV_SUBPIXEL_192 columns halves
