#!/usr/bin/env bash
# Issue #41's quiet CPU grid (docs/perf/verdict-stability/verdict-stability.md) on the lent machine: the CPU
# llama-server built there from the slim pinned source, the default study's synthetic model,
# then the same sweep twice, back to back, into /root/grid/cpu-grid-quiet-{a,b}. Called again
# on the same warm machine it goes on where it stopped (complete jobs are reused). As it ran
# on 2026-12-06 from .device/grid.sh (two calls: the first built and measured a and began b,
# the second finished b):
#   LEASE_S=565 bash scripts/cpu-grid-quiet.sh; SIDES=b LEASE_S=420 bash scripts/cpu-grid-quiet.sh
# Prepared on the CPU machine in the git-ignored .device (carry it): .device/whl with the pip
# download line of /work/.library/device/README.md for hydra-core 1.3.8, omegaconf 2.3.1 and
# gguf 0.19.0, and antlr4-python3-runtime 4.9.3's sdist; .device/src with the slim pinned
# llama.cpp source (scripts/gpu-backends.sh says how it is made). mini-48 is tracked now; the
# run carried it as .device/fixtures/mini-48 and .device/conf/mini-48.yaml, copied in below.
# Out ($OUT): cpu-grid-quiet-{a,b}.tgz (models excluded), lease.log, sweep-{a,b}.log,
# build-cpu.log. The folders' server.log files were left out of docs/perf/verdict-stability/cpu-grid-quiet.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 BENCHKIT_CACHE=/root/bkc
T0=$(date +%s)
LEASE_S=${LEASE_S:-570}
SIDES=${SIDES:-a b}
SWEEP=${SWEEP:-study=default slots=1,2,4,8,16 workload=mini-48 server.threads=8}
left() { echo $(( LEASE_S - ($(date +%s) - T0) )); }
say() { echo "[grid +$(( $(date +%s) - T0 ))s] $*"; }
exec > >(tee -a "$OUT/lease.log") 2>&1
say "call starts $(date -u +%FT%TZ)"
[ -d /tmp/site/hydra ] || python3 -m pip install -q --no-index --no-deps --no-build-isolation \
  --target /tmp/site .device/whl/* || { say "wheels did not install"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
python3 -c "import jinja2, httpx, hydra, gguf, prometheus_client, numpy, yaml, pandas" || exit 1
[ -d fixtures/workloads/mini-48 ] || cp -r .device/fixtures/mini-48 fixtures/workloads/
[ -f conf/workload/mini-48.yaml ] || cp .device/conf/mini-48.yaml conf/workload/
ROOT=$BENCHKIT_CACHE/llama.cpp/b11434
[ -f "$ROOT/src/llama.cpp/CMakeLists.txt" ] || { mkdir -p "$ROOT/src" && tar xJf .device/src/*.tar.xz -C "$ROOT/src"; }
GRID=/root/grid
mkdir -p "$GRID"
if [ ! -f "$GRID/machine.txt" ]; then
  { echo "recorded $(date -u +%FT%TZ)"; grep -m1 "model name" /proc/cpuinfo
    echo "processors $(grep -c ^processor /proc/cpuinfo), nproc $(nproc)"
    lscpu | grep -E "^(Model name|Thread|Core|Socket|CPU max MHz|L3|NUMA node\(s\)|Flags)" | cut -c1-200
    free -g | head -2; uname -r; uptime; nvidia-smi -L 2>/dev/null; } > "$GRID/machine.txt"
fi
cat "$GRID/machine.txt"
BIN=$ROOT/build-cpu/bin/llama-server
if [ ! -x "$BIN" ]; then
  t=$(date +%s)
  python3 -m benchkit.provide cpu > "$OUT/build-cpu.log" 2>&1 &
  bp=$!
  python3 - <<'PY'
from omegaconf import OmegaConf
from benchkit.paths import cache_dir
from benchkit.models.recipe import SynthRecipe
from benchkit.models.synthetic import ensure_model
raw = OmegaConf.load("conf/model/tiny-moe.yaml")["synthetic"]
print("model", ensure_model(SynthRecipe(**OmegaConf.to_container(raw)), cache_dir()))
PY
  wait $bp || { say "build failed"; tail -30 "$OUT/build-cpu.log"; exit 1; }
  say "built in $(( $(date +%s) - t )) s: $(tail -1 "$OUT/build-cpu.log")"
fi
for s in $SIDES; do
  D=$GRID/cpu-grid-quiet-$s
  [ -f "$GRID/$s.done" ] && continue
  L=$(left)
  [ "$L" -gt 90 ] || { say "no time for sweep $s ($L s left)"; break; }
  mkdir -p "$D"
  say "sweep $s: $SWEEP, up to $(( L - 40 )) s; load $(cat /proc/loadavg)"
  (while :; do echo "$(date -u +%T) $(cat /proc/loadavg)"; sleep 15; done) >> "$D/load.txt" &
  lp=$!
  timeout --signal=TERM --kill-after=20 $(( L - 40 )) python3 -m benchkit -m $SWEEP \
    hydra.sweep.dir="$D" >> "$OUT/sweep-$s.log" 2>&1
  rc=$?
  kill "$lp"
  say "sweep $s rc=$rc; load $(cat /proc/loadavg)"
  grep -hE "job [0-9]+ (complete|incomplete|failed|unavailable)|units x|Error|error:" "$OUT/sweep-$s.log" | cut -c1-240 | tail -15
  [ "$rc" -eq 0 ] && touch "$GRID/$s.done"
done
for s in a b; do
  [ -d "$GRID/cpu-grid-quiet-$s" ] || continue
  cp "$GRID/machine.txt" "$GRID/cpu-grid-quiet-$s/machine.txt"
  tar czf "$OUT/cpu-grid-quiet-$s.tgz" --exclude='*.gguf' -C "$GRID" "cpu-grid-quiet-$s"
done
ls -la "$OUT"
say "call ends $(date -u +%FT%TZ)"
