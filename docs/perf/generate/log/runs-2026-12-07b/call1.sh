#!/bin/bash
# Device call 1 (run from the repo root): (a) the cleanup's GPU check (call3.sh of runs-2026-12-07, never
# run): CUDA tests, the flux2_vae contract, the small decoder's hashes (expected 512^2 319a8e4b7e07919a,
# 1024^2 bc57c21ec1997664, 2048^2 e2918491330be71a) and times; (b) the attention softmax diet (ex2 without
# the denormal path, the mask on the last key tile only, one conversion a bf16 pair): the attention
# contract, then bench_transformer_ops and the transformer timer at 1024^2, before (.carry/rel/old) and
# after, interleaved; s3/: the diet with three key/value stages instead of two (ops bench only).
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 240 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*:CudaOps.*Attention*:CudaTransformer.FlashAttention*' 2>&1 | tee $OUT/test_cuda.log | grep -E "FAILED|PASSED|Failure|Expected|Which is|^\[==" | head -20
echo "== contract"; for o in flux2_vae attention; do timeout 90 $B/tf-kernel-contract --only $o --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-160 | head -8; done
SASS=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$SASS" ]; then for b in old/bench_transformer_ops bench_transformer_ops; do
  $SASS -sass $B/$b 2>/dev/null | awk '/Function : .*attention_fused.*attention_kernelILi128/{f=1} /Function : /&&!/attention_fused.*ILi128/{f=0} f' > $OUT/sass-$(basename $(dirname $B/$b)).txt
  echo "$b: $(wc -l < $OUT/sass-$(basename $(dirname $B/$b)).txt) lines, MUFU.EX2 $(grep -c MUFU.EX2 $OUT/sass-$(basename $(dirname $B/$b)).txt), FSETP $(grep -c FSETP $OUT/sass-$(basename $(dirname $B/$b)).txt), F2F/F2FP $(grep -cE 'F2F|F2FP' $OUT/sass-$(basename $(dirname $B/$b)).txt)"; done; fi
echo "== attention A/B (bench_transformer_ops 4196)"
for r in 1 2; do for b in old/bench_transformer_ops bench_transformer_ops s3/bench_transformer_ops; do echo "-- $b"; timeout 60 $B/$b 4196 2>&1 | grep -E "rate|attention|block|forward" | head -6; done; done
wait
echo "== decode"
for s in 512,1024,2048 1024; do timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $s --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | tee -a $OUT/vae.jsonl; done
echo "== transformer timer 1024^2, before / after"
for b in old/bench_transformer_timer bench_transformer_timer old/bench_transformer_timer bench_transformer_timer; do
  echo "-- $b"; timeout 100 $B/$b --model $P/transformer --sizes 1024 --reps 5 2>> $OUT/timer.err | tee -a $OUT/timer.jsonl | cut -c1-330; done
