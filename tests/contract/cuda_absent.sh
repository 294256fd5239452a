#!/bin/sh
# tf-kernel-contract --backend cuda where CUDA is absent: one clear line on stderr and exit code 4.
out=$("$1" --backend cuda 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 4 ] || { echo "expected exit code 4, got $rc"; exit 1; }
echo "$out" | grep -q "the CUDA contract cannot run here" || { echo "expected the 'cannot run here' line"; exit 1; }
