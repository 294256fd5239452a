#!/bin/sh
# README.md's variants table, between its two marker lines, must be `tf-kernel-contract --variants`'
# output byte for byte: the table is written in one place (src/backend/variants.h).
# usage: readme_variants.sh TF_KERNEL_CONTRACT README.md
tool=$1
readme=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
"$tool" --variants > "$dir/table.md" || { echo "$tool --variants failed"; exit 1; }
awk '/^<!-- variants:end -->$/ { inside = 0; ends++ }
     inside { print }
     /^<!-- variants:begin -->$/ { inside = 1; begins++ }
     END { if (begins != 1 || ends != 1) exit 3 }' "$readme" > "$dir/readme.md" ||
  { echo "$readme: expected one '<!-- variants:begin -->' line and one '<!-- variants:end -->' line"; exit 1; }
diff -u "$dir/readme.md" "$dir/table.md" ||
  { echo "$readme: the variants table differs from '$tool --variants' (paste its output between the markers)"; exit 1; }
