#!/usr/bin/env bash
# The Vulkan-against-CUDA study (docs/studies/h200-vulkan-vs-cuda) on the lent H200, a bare
# machine with no network, one 10-minute call at a time: call it again and it goes on where
# the last call stopped (on the same warm machine; on a fresh one, .device/resume/backends.tgz,
# a copy of the last call's $OUT/backends.tgz, brings the sweep folder back).
#   bash scripts/h200-backends.sh          LEASE_S (default 560) seconds of work, then pack
# Each call: the Vulkan loader and GL dispatch libraries (Debian's libvulkan1, libglvnd0,
# libegl1, libgl1, libglx0, libopengl0, libgles2 from .gl/; the machine has NVIDIA's Vulkan
# driver but neither) and the carried wheels; once per machine: the carried portable Vulkan
# build unpacked into the cache (.device/vulkan/*.tar.xz, made on the CPU machine by
# `python -m benchkit.provide vulkan --portable --pack FILE`), CUDA built from the carried
# pinned sdist, the synthetic model written, the sampler's cost measured; once per backend:
# llama-bench and llama-batched-bench on that backend's binary (ground truth); then the sweep
#   mtp=false,true backend=vulkan,cuda slots=1,2,4,8
# (MTP off first: the backend comparison is the headline), stopped with SIGINT before the
# call's limit (the job in flight is written incomplete and measured again next call).
# Out ($OUT, at most 8 files): backends.tgz (the sweep folder with ground-truth/, models
# excluded), sweep.log, lease.log, build-cuda.log, telemetry-cost-h200.json.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 BENCHKIT_CACHE=${BENCHKIT_CACHE:-/root/bkc}
T0=$(date +%s)
left() { echo $(( ${LEASE_S:-560} - ($(date +%s) - T0) )); }
say() { echo "[h200-backends +$(( $(date +%s) - T0 ))s] $*"; }
exec > >(tee -a "$OUT/lease.log") 2>&1
NAME=backends
SWEEP=/root/$NAME
GT=$SWEEP/ground-truth
MODEL=synth-glm4moe-30b-a3b
ROOT=$BENCHKIT_CACHE/llama.cpp/b11434
VK=$ROOT/build-vulkan-portable/bin
CU=$ROOT/build-cuda/bin

# The Vulkan loader (libvulkan1) and the GL dispatch libraries NVIDIA's Vulkan driver loads
# (libglvnd0 and friends): without the latter the loader finds the driver file but no device,
# and `--list-devices` says "(none)" (seen 2026-12-03). Then NVIDIA's own driver file, named
# outright: the copy in /usr/share/vulkan/icd.d gave no device either.
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
mkdir -p "$BENCHKIT_CACHE/sdist" "$ROOT"
cp -n .device/sdist/*.tar.gz "$BENCHKIT_CACHE/sdist/" 2>/dev/null
[ -x "$VK/llama-server" ] || tar xJf .device/vulkan/*.tar.xz -C "$ROOT"
# The build bundles what Debian 12 gave it beyond the C and C++ runtimes; should the loader
# still miss a library, the build's own folder is searched first.
ldd "$VK/llama-server" | grep -q "not found" && export LD_LIBRARY_PATH=$VK
if [ ! -d "$SWEEP" ] && [ -f ".device/resume/$NAME.tgz" ]; then tar xzf ".device/resume/$NAME.tgz" -C /root; fi
mkdir -p "$GT"

model_path() {  # writes (or reuses) the synthetic model conf/model/$MODEL.yaml; prints its path
  python3 - "$MODEL" <<'PY'
import sys
from omegaconf import OmegaConf
from benchkit.paths import cache_dir
from benchkit.models.synthetic import SynthRecipe, ensure_model
raw = OmegaConf.load(f"conf/model/{sys.argv[1]}.yaml")["synthetic"]
print(ensure_model(SynthRecipe(**OmegaConf.to_container(raw)), cache_dir()))
PY
}

# 1. The machine, and what the carried Vulkan build sees on it.
if ! grep -q "Vulkan0:" "$GT/vulkan-devices.txt" 2>/dev/null; then
  { nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit --format=csv; nproc; } > "$GT/machine.txt"
  { echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; ldd "$VK/llama-server"; "$VK/llama-server" --list-devices; } > "$GT/vulkan-devices.txt" 2>&1
fi
cat "$GT/machine.txt"; grep -E "ggml_vulkan|Vulkan0|not found" "$GT/vulkan-devices.txt"

# 2. CUDA built here (GPU idle meanwhile: nothing is measured during the build), the model.
if [ ! -x "$CU/llama-server" ]; then
  t=$(date +%s)
  python3 -m benchkit.provide cuda > "$OUT/build-cuda.log" 2>&1 &
  bp=$!
  M=$(model_path); say "model $M ready"
  python3 bench/telemetry_cost.py --backend cuda --seconds 10 --out "$OUT/telemetry-cost-h200.json"
  wait $bp || { say "CUDA build failed"; tail -5 "$OUT/build-cuda.log"; }
  echo "build_s $(( $(date +%s) - t ))" | tee -a "$GT/machine.txt"
fi
M=$(model_path)

# 3. Ground truth per backend on its own binary and the same model (Vulkan first: its runs
#    also fill the driver's pipeline cache before the sweep's Vulkan jobs).
for b in vulkan cuda; do
  [ -f "$GT/$b/done" ] && continue
  # -ngl 99 on a build that sees no GPU runs on the CPU, for many minutes: not ground truth.
  [ $b = vulkan ] && ! grep -q "Vulkan0:" "$GT/vulkan-devices.txt" && { say "Vulkan sees no GPU"; continue; }
  [ "$(left)" -lt 200 ] && { say "no time for $b ground truth"; break; }
  bin=$([ $b = vulkan ] && echo "$VK" || echo "$CU")
  mkdir -p "$GT/$b"
  say "ground truth $b"
  "$bin/llama-bench" -m "$M" -ngl 99 -fa 1 -p 1024 -n 64 -r 3 -o json > "$GT/$b/llama-bench.json" 2> "$GT/$b/llama-bench.log"
  "$bin/llama-batched-bench" -m "$M" -ngl 99 -fa on -c 40960 -b 2048 -ub 512 \
    -npp 1024 -ntg 48 -npl 1,2,4,8,16 --output-format jsonl 2> "$GT/$b/batched-bench.log" | grep '^{' > "$GT/$b/batched-bench.jsonl"
  [ -s "$GT/$b/batched-bench.jsonl" ] && touch "$GT/$b/done"
  cat "$GT/$b/batched-bench.jsonl"
done

# 4. The sweep, resumed where it stopped (complete jobs are reused).
if [ "$(left)" -gt 100 ]; then
  say "sweep for $(( $(left) - 45 )) s"
  timeout --signal=INT --kill-after=30 $(( $(left) - 45 )) python3 -m benchkit -m \
    study=h200-backends hardware=h200 model=$MODEL workload=gpu-16 workload.units=8 \
    server.flash_attn=on mtp=false,true backend=vulkan,cuda slots=1,2,4,8 \
    hydra.sweep.dir="$SWEEP" > "$OUT/sweep.log" 2>&1
  grep -E "job [0-9]+ (complete|incomplete|failed|unavailable)" "$OUT/sweep.log" | cut -c1-300
fi
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit --format=csv > "$SWEEP/machine-end.txt" 2>/dev/null
tar czf "$OUT/$NAME.tgz" --exclude='*.gguf' -C /root "$NAME"
say "packed $(du -h "$OUT/$NAME.tgz" | cut -f1)"
