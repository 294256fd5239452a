#!/bin/bash
# call1.sh's carry: bench/make_device_carry.sh h18, plus test_cuda built with one planted fault (a halo slab
# counted as 16 positions inside the picture whatever its place: CudaGroupStats' 200-wide case must go red), the
# source restored after. Run from the repo root with the tree clean.
set -euo pipefail
bash bench/make_device_carry.sh h18
F=src/backend/cuda/kernels/split_products/slab_stats.cuh
cp $F /tmp/slab_stats.cuh.orig
trap 'cp /tmp/slab_stats.cuh.orig $F' EXIT
sed -i 's/  const int n = min(max(Wo - first, 0), 16);/  const int n = 16 + 0 * first;  \/\/ PLANTED/' $F
grep -q PLANTED $F
cmake --build --preset release -j"$(nproc)" --target test_cuda
cp build/release/tests/test_cuda .carry/h18/new/test_cuda_planted
cp /tmp/slab_stats.cuh.orig $F
cmake --build --preset release -j"$(nproc)" --target test_cuda
git diff --quiet -- $F && echo "$F restored"
tar cJf .carry/h18.tar.xz -C .carry h18
echo "carry: .carry/h18.tar.xz $(du -h .carry/h18.tar.xz | cut -f1); run call1.sh with carry [\".carry/h18.tar.xz\", \".whl\"]"
