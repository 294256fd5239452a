#!/bin/bash
# Written in session 2026-12-07i for the next device call (not run: no machine could be started all session).
# .carry/h17/new: a release build of main (cdb1ea1's kernels: defaults TF_SOFTMAX_ROWS=tiles,
# TF_CONV_WEIGHTS=prepared; TF_CONV_SHORTCUT=beside opt-in; the beside test's NaN fill now on the engine's
# stream, log v29b), made by make_carry.sh. The beside test (repeats, unwritten outputs, compute-sanitizer where the
# machine has it), the CUDA tests, the contracts, the defaults against the ones before 2026-12-07h and with
# beside, the gate, a timeline of the defaults. If the beside test passes, make beside the default.
source bench/device_preamble.sh .carry/h17.tar.xz .carry/h17/new
echo "== beside"; timeout 60 $B/test_cuda --gtest_filter='CudaConv.ConvolutionBeside*' --gtest_repeat=3 2>&1 | grep -E "Failure|differs|main,|beside,|OK \]|FAILED \]" | head -20
CS=$(ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
echo "== sanitizer: ${CS:-none}"
if [ -n "$CS" ]; then for tool in memcheck racecheck synccheck; do
  timeout 120 $CS --tool $tool $B/test_cuda --gtest_filter='CudaConv.ConvolutionBeside*' > $OUT/sanitizer-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -cE '^=+ (Invalid|Race|Barrier|ERROR)' $OUT/sanitizer-$tool.txt) reports; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.txt | head -1)"
done; fi
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaAttention.*:CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|^\[==" | head -10
echo "== contract"; for k in attention_f32_channels conv2d; do
  timeout 60 $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL" | cut -c1-300; done
wait
OLD="TF_SOFTMAX_ROWS=resident TF_CONV_WEIGHTS=per_call"
echo "== decode A/B"
vae_decode new "X=1" 512,1024,2048
vae_decode old "$OLD" 512,1024,2048
for _ in 1 2 3; do vae_decode new "X=1" 1024; vae_decode old "$OLD" 1024; vae_decode beside "TF_CONV_SHORTCUT=beside" 1024; done
echo "== VAE gate 1024^2 (defaults)"
vae_gate_and_timeline "X=1"
