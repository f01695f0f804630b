#!/usr/bin/env bash
# The same-machine check of the H100 race (issue #33): on the machine that ran the race's last
# rounds (warm, after scripts/gpu-backends.sh), the race's MTP-off backend pairs at 1, 8 and 16
# slots measured again, each on the race's own units (3, 8, 16), in one sweep folder. It tells
# the same point's time on two machines, and each backend ratio on one machine.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 BENCHKIT_CACHE=${BENCHKIT_CACHE:-/root/bkc} PYTHONPATH=/tmp/site:$PWD
T0=$(date +%s); left() { echo $(( ${LEASE_S:-540} - ($(date +%s) - T0) )); }
exec > >(tee -a "$OUT/check.log") 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
VK=$BENCHKIT_CACHE/llama.cpp/b11434/build-vulkan-portable/bin
ldd "$VK/llama-server" | grep -q "not found" && export LD_LIBRARY_PATH=$VK
D=/root/machine-check
{ echo "call $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader; } | tee -a "$D.machines.txt"
for su in 1:3 8:8 16:16; do
  s=${su%:*}; u=${su#*:}
  [ "$(left)" -lt 60 ] && { echo "no time for $s slots"; break; }
  timeout --signal=TERM --kill-after=20 $(( $(left) - 25 )) python3 -m benchkit -m study=gpu-backends hardware=h100 \
    model=synth-glm4moe-30b-a3b workload=gpu-16 server.flash_attn=on mtp=false slots=$s backend=vulkan,cuda \
    workload.units=$u hydra.sweep.dir=$D/slots-$s >> "$OUT/check-sweep.log" 2>&1
  grep -E "job [0-9]+ (complete|incomplete|failed)" "$OUT/check-sweep.log" | tail -2
done
cp "$D.machines.txt" $D/machines.txt
tar czf "$OUT/machine-check.tgz" --exclude='*.gguf' -C /root machine-check
echo "done $(date -u +%FT%TZ)"
