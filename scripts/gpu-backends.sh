#!/usr/bin/env bash
# The Vulkan-against-CUDA study, warm and raced (conf/study/gpu-backends.yaml), on the lent
# NVIDIA machine (an H100 or an H200: the card is read here and named in hardware=), a bare
# machine with no network, one 10-minute call at a time. Call it again and it goes on where
# the last call stopped: on the same warm machine from /root/gpu-backends; on a fresh one from
# .device/resume/gpu-backends-<card>.tgz, the last call's $OUT/gpu-backends-<card>.tgz
# copied there (the race replays its rounds and reuses every complete job; only what is left
# is measured), or on a fresh checkout from the published results.
#   LEASE_S=560 bash scripts/gpu-backends.sh
# Prepared once on the CPU machine, in git-ignored folders (`echo /.device/ >> .git/info/exclude`,
# the same for /.gl/): .gl with the apt-get download line of /work/.library/device/README.md;
# .device/whl with `pip download --no-deps --only-binary=:all: --python-version 3.12 ...` (that
# README's line) of hydra-core 1.3.8, omegaconf 2.3.1, gguf 0.19.0, prometheus-client 0.26.0,
# nvidia-ml-py 13.615.71 and antlr4-python3-runtime 4.9.3's sdist; .device/vulkan with
# `python -m benchkit.provide vulkan --portable --pack .device/vulkan/llama-vulkan-portable-b11434.tar.xz`;
# .device/src with the pinned sdist (`python -m benchkit.provide cpu` caches it under
# ~/.cache/benchkit/sdist) unpacked, models/*.gguf, docs, .github, media, .devops, ci, gguf-py
# and conversion removed, and `llama.cpp` packed with tar cJf. Carry all four and .gl.
# Carried: .gl/*.deb (the Vulkan loader and GL dispatch libraries NVIDIA's Vulkan driver
# loads), .device/whl (wheels the image lacks), the pinned llama.cpp source for the CUDA build
# (.device/sdist, or .device/src: the same tree without its vocab .gguf files, docs and
# conversion scripts, 8.6 MiB against 36 MiB, since the tracked tree and the Vulkan pack leave
# a call's 64 MiB no room for the sdist), or a CUDA build made on an earlier machine
# (.device/cuda/*.tar.xz; its packed bin/ came to over the 16 MiB a returned file may be, so
# none travels yet), .device/vulkan/*.tar.xz (`python -m benchkit.provide vulkan --portable --pack FILE`
# on the CPU machine), .device/resume/gpu-backends-<card>.tgz (optional).
# Each call: the libraries and wheels; once per machine: the Vulkan build unpacked, CUDA built
# here (nothing is measured while it builds), the synthetic model written; once per backend:
# llama-bench and llama-batched-bench on that backend's binary (ground truth); then the race
#   hydra/sweeper=racing mtp=false,true slots=1,16,2,4,8 backend=vulkan,cuda
# (MTP off first: the backend comparison is the headline; each slot count on both backends
# before the next, 1 and 16 slots first, so a call cut short leaves pairs to compare; Vulkan
# at 1 slot first, where the old study's cold start was), stopped with SIGTERM before the
# call's limit (GT_RESERVE seconds kept for the ground truth after it).
# Out ($OUT): gpu-backends-<card>.tgz (the sweep folder with ground-truth/, models excluded),
# sweep.log, lease.log, build-cuda.log.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 BENCHKIT_CACHE=${BENCHKIT_CACHE:-/root/bkc}
T0=$(date +%s)
left() { echo $(( ${LEASE_S:-560} - ($(date +%s) - T0) )); }
say() { echo "[gpu-backends +$(( $(date +%s) - T0 ))s] $*"; }
exec > >(tee -a "$OUT/lease.log") 2>&1
NAME=gpu-backends
SWEEP=/root/$NAME
GT=$SWEEP/ground-truth
MODEL=synth-glm4moe-30b-a3b
ROOT=$BENCHKIT_CACHE/llama.cpp/b11434
VK=$ROOT/build-vulkan-portable/bin
CU=$ROOT/build-cuda/bin
say "call starts $(date -u +%FT%TZ)"

# The Vulkan loader and the GL dispatch libraries NVIDIA's Vulkan driver loads: without the
# latter the loader finds the driver file but no device (seen 2026-12-03 on the H200).
if ! ldconfig -p | grep -q 'libGLdispatch.so.0 ' || ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
[ -d /tmp/site/hydra ] || python3 -m pip install -q --no-index --no-deps --no-build-isolation \
  --target /tmp/site .device/whl/* || { say "wheels did not install"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
# The jobs and the race need these; the closing report also pandas and matplotlib (the report
# is rendered again on the CPU machine from the sweep folder, so their absence costs nothing).
python3 -c "import jinja2, httpx, hydra, gguf, pynvml, prometheus_client, numpy, yaml" \
  || { say "a Python package is missing: carry its wheel in .device/whl"; exit 1; }
python3 -c "import pandas, matplotlib" 2>/dev/null || say "no pandas/matplotlib here: no closing report"
mkdir -p "$BENCHKIT_CACHE/sdist" "$ROOT"
cp -n .device/sdist/*.tar.gz "$BENCHKIT_CACHE/sdist/" 2>/dev/null
# The slim source goes where benchkit.server.source extracts the sdist (it then skips the sdist).
[ -f "$ROOT/src/llama.cpp/CMakeLists.txt" ] || ! ls .device/src/*.tar.xz >/dev/null 2>&1 \
  || { mkdir -p "$ROOT/src" && tar xJf .device/src/*.tar.xz -C "$ROOT/src"; }
[ -x "$CU/llama-server" ] || ! ls .device/cuda/*.tar.xz >/dev/null 2>&1 || tar xJf .device/cuda/*.tar.xz -C "$ROOT"
# The Vulkan build travels in a later call than the sdist (both together are over a call's
# 64 MiB): without it this call builds CUDA, writes the model and measures CUDA's ground truth.
[ -x "$VK/llama-server" ] || ! ls .device/vulkan/*.tar.xz >/dev/null 2>&1 || tar xJf .device/vulkan/*.tar.xz -C "$ROOT"
[ -x "$VK/llama-server" ] && ldd "$VK/llama-server" | grep -q "not found" && export LD_LIBRARY_PATH=$VK
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$CARD" in *H100*) HW=h100 ;; *H200*) HW=h200 ;; *) say "unknown card $CARD"; exit 1 ;; esac
# Each card its own study: resumed from its own copy, or from its own published results.
if [ ! -d "$SWEEP" ] && [ -f ".device/resume/$NAME-$HW.tgz" ]; then tar xzf ".device/resume/$NAME-$HW.tgz" -C /root; fi
PUBLISHED=docs/studies/$HW-vulkan-vs-cuda-warm/results
if [ ! -d "$SWEEP" ] && [ -f "$PUBLISHED/racing.json" ]; then cp -r "$PUBLISHED" "$SWEEP"; fi
mkdir -p "$GT"
[ -f "$GT/card" ] && [ "$(cat "$GT/card")" != "$HW" ] && { say "the resumed sweep ran on $(cat "$GT/card"), this machine is $HW: a study on one card does not go on on another"; exit 1; }
echo "$HW" > "$GT/card"

model_path() {  # writes (or reuses) the synthetic model conf/model/$MODEL.yaml; prints its path
  python3 - "$MODEL" <<'PY'
import sys
from omegaconf import OmegaConf
from benchkit.paths import cache_dir
from benchkit.models.recipe import SynthRecipe
from benchkit.models.synthetic import ensure_model
raw = OmegaConf.load(f"conf/model/{sys.argv[1]}.yaml")["synthetic"]
print(ensure_model(SynthRecipe(**OmegaConf.to_container(raw)), cache_dir()))
PY
}

# 1. The machine, and what the carried Vulkan build sees on it.
if [ -x "$VK/llama-server" ] && ! grep -q "Vulkan0:" "$GT/vulkan-devices.txt" 2>/dev/null; then
  { echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; ldd "$VK/llama-server"; "$VK/llama-server" --list-devices; } > "$GT/vulkan-devices.txt" 2>&1
fi
[ -f "$GT/machine.txt" ] || { nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit --format=csv; nproc; } > "$GT/machine.txt"
# machine.txt is the machine the ground truth ran on (the first); each call records its own
# card (a resumed sweep's later jobs may run on another lent machine: the report names them).
{ echo "call $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader; } | tee -a "$SWEEP/machines.txt"
grep -sE "ggml_vulkan|Vulkan0|not found" "$GT/vulkan-devices.txt"

# 2. CUDA built here (GPU idle meanwhile: nothing is measured during the build), the model.
if [ ! -x "$CU/llama-server" ]; then
  t=$(date +%s)
  python3 -m benchkit.provide cuda > "$OUT/build-cuda.log" 2>&1 &
  bp=$!
  M=$(model_path); say "model $M ready"
  wait $bp || { say "CUDA build failed"; tail -5 "$OUT/build-cuda.log"; }
  echo "build_s $(( $(date +%s) - t ))" | tee -a "$GT/machine.txt"
fi
M=$(model_path)

# 3. Ground truth per backend on its own binary and the same model (after the race in a call,
#    so a call cut short has measured the sweep first; the GPU is warm by then for both).
ground_truth() {
  for b in vulkan cuda; do
    # Once per study, on the first machine (done names its card); not again on a later one.
    [ -f "$GT/$b/done" ] && continue
    # -ngl 99 on a build that sees no GPU runs on the CPU, for many minutes: not ground truth.
    [ $b = vulkan ] && ! grep -qs "Vulkan0:" "$GT/vulkan-devices.txt" && { say "no Vulkan build here, or it sees no GPU"; continue; }
    [ "$(left)" -lt 90 ] && { say "no time for $b ground truth"; break; }
    bin=$([ $b = vulkan ] && echo "$VK" || echo "$CU")
    mkdir -p "$GT/$b"
    say "ground truth $b"
    "$bin/llama-bench" -m "$M" -ngl 99 -fa 1 -p 1024 -n 64 -r 3 -o json > "$GT/$b/llama-bench.json" 2> "$GT/$b/llama-bench.log"
    "$bin/llama-batched-bench" -m "$M" -ngl 99 -fa on -c 40960 -b 2048 -ub 512 \
      -npp 1024 -ntg 48 -npl 1,2,4,8,16 --output-format jsonl 2> "$GT/$b/batched-bench.log" | grep '^{' > "$GT/$b/batched-bench.jsonl"
    [ -s "$GT/$b/batched-bench.jsonl" ] && nvidia-smi --query-gpu=uuid --format=csv,noheader > "$GT/$b/done"
    cat "$GT/$b/batched-bench.jsonl"
  done
}

# 4. The race, resumed where it stopped (complete jobs are reused).
if [ ! -x "$VK/llama-server" ]; then
  say "no race this call: the Vulkan build has not travelled yet"
elif [ "$(left)" -gt $(( 100 + ${GT_RESERVE:-0} )) ]; then
  say "race for $(( $(left) - 45 - ${GT_RESERVE:-0} )) s"
  # SIGTERM, which benchkit stops on as on Ctrl-C, so an interrupted job's reason says
  # "stopped by SIGTERM" (with SIGINT it said "interrupted by the user (Ctrl-C)").
  timeout --signal=TERM --kill-after=30 $(( $(left) - 45 - ${GT_RESERVE:-0} )) python3 -m benchkit -m \
    hydra/sweeper=racing study=gpu-backends hardware=$HW model=$MODEL workload=gpu-16 \
    server.flash_attn=on mtp=false,true slots=1,16,2,4,8 backend=vulkan,cuda \
    hydra.sweep.dir="$SWEEP" >> "$OUT/sweep.log" 2>&1
  grep -E "job [0-9]+ (complete|incomplete|failed|unavailable)|round|stopped|settled" "$OUT/sweep.log" | cut -c1-300 | tail -40
fi
ground_truth
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit --format=csv > "$SWEEP/machine-end.txt" 2>/dev/null
say "call ends $(date -u +%FT%TZ)"
cp "$OUT/lease.log" "$SWEEP/lease-$(date +%s).log" 2>/dev/null
tar czf "$OUT/$NAME-$HW.tgz" --exclude='*.gguf' -C /root "$NAME"
say "packed $(du -h "$OUT/$NAME-$HW.tgz" | cut -f1)"
