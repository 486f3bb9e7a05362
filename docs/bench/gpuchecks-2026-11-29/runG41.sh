#!/bin/bash
# Run G41 (commit 1079bea2): mem.sh's capture case alone, its whole output kept (G40's last line was a PyTorch
# warning, not the result line), twice under nvtaskset --mem 4G and once plain.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
for i in 1 2; do
	PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync timeout 120 build/bin/nvtaskset --no-mps --mem 4G -c 0-65 \
		python3 tests/gpu/mem_torch.py capture >"$OUT/capture-nvt-$i.txt" 2>&1
	echo "rc $?"; cut -c1-240 "$OUT/capture-nvt-$i.txt" | grep -v "^ *File\|^    "
done
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync timeout 120 python3 tests/gpu/mem_torch.py capture >"$OUT/capture-plain.txt" 2>&1
echo "rc $?"; cut -c1-240 "$OUT/capture-plain.txt" | grep -v "^ *File\|^    "
date -u
