#!/bin/bash
# Device call 6 (run from the repo root): the Python package's overhead three times at 41 repetitions
# (call 1 and call 5 gave the 75-token encode -0.3% and 2.4% at 15).
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)")
for i in 1 2 3; do
  REPS=41 PY_PKG=.carry/py BIN=$B OUT=$OUT/py$i PIPE=$P timeout 150 bench/python_overhead/run.sh 2>&1 | tail -3
done
