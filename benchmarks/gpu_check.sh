#!/usr/bin/env bash
# What a session lent a CUDA GPU runs, in one device call (about 7 minutes on an H200):
# the tests that need the GPU, then the GPU benchmark (benchmarks/gpu.py).
#
#     bash benchmarks/gpu_check.sh [FOLDER]    # writes FOLDER/gpu_tests.txt and FOLDER/gpu.json
#
# FOLDER defaults to benchmarks/results; on the device machine pass "$OUT" to get both back.
set -u
out="${1:-benchmarks/results}"
mkdir -p "$out"
export PYTHONPATH=src PYTHONUNBUFFERED=1
python3 -m pytest -q -p no:cacheprovider -k "cuda or stacked" \
    tests/training/test_captured_step.py tests/commands/test_shipped.py \
    tests/modules/test_batched_attention.py 2>&1 | tee "$out/gpu_tests.txt"
python3 benchmarks/gpu.py --out "$out/gpu.json"
