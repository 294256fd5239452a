#!/bin/bash
# call1.sh's carry: bench/make_device_carry.sh h18, plus test_cuda built with each of two planted faults, the source
# restored after each: `halo` counts a halo slab as 16 positions inside the picture wherever it lies, `rows` takes
# every row tile as wholly inside (CudaGroupStats' 200-wide halo case and 36-wide row tiles case must go red).
# Run from the repo root with the tree clean.
set -euo pipefail
bash bench/make_device_carry.sh h18
F=src/backend/cuda/kernels/split_products/slab_stats.cuh
cp $F /tmp/slab_stats.cuh.orig
trap 'cp /tmp/slab_stats.cuh.orig $F' EXIT
plant() {  # name, sed expression
  cp /tmp/slab_stats.cuh.orig $F
  sed -i "$2" $F
  grep -q PLANTED $F
  cmake --build --preset release -j"$(nproc)" --target test_cuda
  cp build/release/tests/test_cuda .carry/h18/new/test_cuda_planted_$1
}
plant halo 's/  const int n = min(max(Wo - first, 0), 16);/  const int n = 16 + 0 * first;  \/\/ PLANTED/'
plant rows 's/  const bool whole = oy0 + s.BH <= s.Ho \&\& ox0 + s.BW <= s.Wo;/  const bool whole = true;  \/\/ PLANTED/'
cp /tmp/slab_stats.cuh.orig $F
git diff --quiet -- $F && echo "$F restored"
cmake --build --preset release -j"$(nproc)" --target test_cuda
tar cJf .carry/h18.tar.xz -C .carry h18
echo "carry: .carry/h18.tar.xz $(du -h .carry/h18.tar.xz | cut -f1); run call1.sh with carry [\".carry/h18.tar.xz\", \".whl\"]"
