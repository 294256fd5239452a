#!/bin/bash
# Device call 6: the whole picture (ours with the sampling loop on the device, torch eager) and the
# transformer's forward / guidance step / loop step, fused epilogues against separate, torch eager beside.
# EPI: TF_LINEAR_EPILOGUE for the picture (fused).
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
export TF_LINEAR_EPILOGUE=${EPI:-fused}
echo "== generate (TF_LINEAR_EPILOGUE=$TF_LINEAR_EPILOGUE)"
BIN=$B OUT=$OUT/gen REPS=3 REPS_TORCH=1 IMPLS=eager SKIP_BIG=${SKIP_BIG:-1} timeout 330 bench/generate_vs_torch/run.sh 2>&1 | grep -v "^\[transformers\]\|There are modules" | tail -30
CK=/tmp/moss-pipeline-random/transformer
for v in fused separate; do
  echo "== transformer timer, TF_LINEAR_EPILOGUE=$v"
  TF_LINEAR_EPILOGUE=$v timeout 150 $B/bench_transformer_timer --model $CK --sizes ${SIZES:-1024} --reps 5 > $OUT/ours-$v.jsonl 2> $OUT/ours-$v.err; tail -2 $OUT/ours-$v.err
done
echo "== torch eager timer"
PYTHONPATH=/tmp/site timeout 120 python3 bench/transformer_vs_torch/torch_timer.py --model $CK --sizes ${SIZES:-1024} --reps 3 --impls eager --mm-size 8192 --device cuda > $OUT/torch.jsonl 2> $OUT/torch.err; tail -2 $OUT/torch.err
for v in fused separate; do echo "-- ours $v"; python3 bench/transformer_vs_torch/report.py $OUT/ours-$v.jsonl $OUT/torch.jsonl; done
