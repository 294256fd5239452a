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
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1
sed -n 3,24p $OUT/vae-kernels.txt; xz -9 $OUT/vae-kernels.csv
