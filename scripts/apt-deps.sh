#!/usr/bin/env bash
# Debian packages that building llama-server needs (a compiler and cmake), Chromium and CJK
# fonts for the report's browser check (Korean report), SLURM, munge and MariaDB's server
# binaries (no service) for the cluster tests (scripts/slurm-local.sh runs a one-node cluster
# with accounting from them), then what the optional Vulkan build needs
# (scripts/vulkan-deps.sh). Idempotent.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v chromium >/dev/null || need+=(chromium)
[ -d /usr/share/fonts/opentype/noto ] || need+=(fonts-noto-cjk)
[ -x /usr/sbin/slurmctld ] || need+=(slurmctld)
[ -x /usr/sbin/slurmd ] || need+=(slurmd)
command -v sbatch >/dev/null || need+=(slurm-client)
[ -x /usr/sbin/munged ] || need+=(munge)
[ -x /usr/sbin/slurmdbd ] || need+=(slurmdbd)
[ -x /usr/sbin/mariadbd ] || need+=(mariadb-server-core)
command -v mariadb >/dev/null || need+=(mariadb-client-core)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
# Vulkan is optional: where it cannot be provided, its one-line reason is printed, the CPU
# build goes on, and benchkit reports backend=vulkan as unavailable with its own reason.
"$(dirname "$0")/vulkan-deps.sh" || echo "apt-deps: going on without the Vulkan build" >&2
