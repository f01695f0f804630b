#!/usr/bin/env bash
# Debian packages benchkit's Makefile needs, per target, and nothing more:
#
#   build  what building and running llama-server needs: a compiler, make and cmake
#          (`make study`, `make server`)
#   test   build's, plus the test suite's: Chromium and CJK fonts (the report's browser check,
#          the Korean report), SLURM's daemons and client, munge and MariaDB's server binaries
#          (the cluster tests run a private one-node cluster from them, scripts/slurm-local.sh)
#          (`make test`)
#
# Vulkan's build dependencies are scripts/vulkan-deps.sh's, for `make test` (server-vulkan).
#
#   scripts/apt-deps.sh build|test             install what is missing
#   scripts/apt-deps.sh --list build|test      print the target's packages, one a line
#   scripts/apt-deps.sh --missing build|test   print those not there yet, one a line
#   scripts/apt-deps.sh --dry-run build|test   print the commands it would run; runs nothing
#
# APT_DEPS_ASSUME_MISSING=1 takes every package as missing (the tests use it with --dry-run).
#
# An install enables and starts no service: packages come without their recommendations,
# while a policy-rc.d that refuses every start (exit 101) and a systemd preset that disables
# every unit (`disable *`) are in place; both are removed afterwards (an existing policy-rc.d
# is put back as it was), and init scripts the install added are disabled (update-rc.d).
# The cluster tests start their daemons themselves, as plain processes, and stop them.
# Afterwards it checks that no daemon of the packages it installed runs, and exits 1 naming
# it if one does. Idempotent: with nothing missing it does nothing.
set -euo pipefail

BUILD=(cmake g++ make)
TEST=(chromium fonts-noto-cjk slurmctld slurmd slurm-client slurmdbd munge
  mariadb-server-core mariadb-client-core)
# The daemons those packages carry, by process name: none may run after an install.
DAEMONS=(slurmctld slurmd slurmdbd munged mariadbd)

usage() { echo "usage: $0 [--list|--missing|--dry-run] build|test" >&2; exit 2; }

mode=install
case "${1:-}" in
  --list|--missing|--dry-run) mode=${1#--}; shift ;;
esac
[ $# -eq 1 ] || usage
case "$1" in
  build) pkgs=("${BUILD[@]}") ;;
  test) pkgs=("${BUILD[@]}" "${TEST[@]}") ;;
  *) usage ;;
esac

# Whether a package's tool is there already (from apt or otherwise: a cmake from pip, a
# compiler the user built); then it is not installed again.
present() {
  case "$1" in
    cmake|g++|make|chromium) command -v "$1" >/dev/null ;;
    fonts-noto-cjk) [ -d /usr/share/fonts/opentype/noto ] ;;
    slurmctld|slurmd|slurmdbd) [ -x "/usr/sbin/$1" ] ;;
    slurm-client) command -v sbatch >/dev/null ;;
    munge) [ -x /usr/sbin/munged ] ;;
    mariadb-server-core) [ -x /usr/sbin/mariadbd ] ;;
    mariadb-client-core) command -v mariadb >/dev/null ;;
    *) dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" ;;
  esac
}

if [ "$mode" = list ]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi
need=()
for p in "${pkgs[@]}"; do
  [ "${APT_DEPS_ASSUME_MISSING:-}" != 1 ] && present "$p" || need+=("$p")
done
if [ "$mode" = missing ]; then
  [ ${#need[@]} -eq 0 ] || printf '%s\n' "${need[@]}"
  exit 0
fi
[ ${#need[@]} -gt 0 ] || exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
POLICY=/usr/sbin/policy-rc.d
PRESET=/etc/systemd/system-preset/00-benchkit-apt-deps.preset
INSTALL=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
  "${need[@]}")

if [ "$mode" = dry-run ]; then
  echo "# refuse service starts: $POLICY (exit 101), the existing one kept aside"
  echo "# enable no unit: $PRESET (disable *)"
  echo "$SUDO apt-get update -qq"
  echo "$SUDO ${INSTALL[*]}"
  echo "# then: $POLICY and $PRESET as they were; no ${DAEMONS[*]} running"
  exit 0
fi

running_daemons() {  # the DAEMONS running now, one a line
  local d
  for d in "${DAEMONS[@]}"; do pgrep -x "$d" >/dev/null 2>&1 && echo "$d"; done
  return 0
}
before=$(running_daemons)
initd_before=$(ls /etc/init.d 2>/dev/null || true)

# The guards, and their removal however the install ends.
saved=""
restore() {
  if [ -n "$saved" ]; then $SUDO mv -f "$saved" "$POLICY"; else $SUDO rm -f "$POLICY"; fi
  $SUDO rm -f "$PRESET"
}
if [ -e "$POLICY" ]; then
  saved=$($SUDO mktemp "$POLICY.benchkit.XXXXXX")
  $SUDO cp -p "$POLICY" "$saved"
fi
trap restore EXIT
trap 'exit 130' INT TERM
printf '#!/bin/sh\n# benchkit scripts/apt-deps.sh: no service starts while it installs.\nexit 101\n' |
  $SUDO tee "$POLICY" >/dev/null
$SUDO chmod 755 "$POLICY"
$SUDO mkdir -p "$(dirname "$PRESET")"
echo "disable *" | $SUDO tee "$PRESET" >/dev/null

echo "apt-deps ($1): installing ${need[*]}" >&2
$SUDO apt-get update -qq
$SUDO "${INSTALL[@]}"

restore
trap - EXIT
# Init scripts are enabled by update-rc.d at install, presets or not (their S links are
# what a machine booting with sysvinit starts): disable those the install added.
for s in $(comm -13 <(echo "$initd_before" | sort) <(ls /etc/init.d 2>/dev/null | sort)); do
  $SUDO update-rc.d "$s" disable >/dev/null 2>&1 || true
done
started=$(comm -13 <(echo "$before" | sort) <(running_daemons | sort) | tr '\n' ' ')
if [ -n "${started// /}" ]; then
  echo "apt-deps: the install started ${started% }: stop it (benchkit needs no system service)" >&2
  exit 1
fi
