#!/usr/bin/env bash
# Provide what llama.cpp's Vulkan build and run need on Debian, without upgrading the system:
# glslc, libvulkan-dev, spirv-headers and mesa-vulkan-drivers (llvmpipe, a Vulkan device on
# the CPU) from the system's own release, and, where that release's Vulkan headers are older
# than the pinned llama.cpp needs (Debian 12: 1.3.239 < 1.3.261), only the headers of
# Debian 13's libvulkan-dev, unpacked into the benchkit cache (installing that package would
# upgrade libc6). benchkit.server.provide_command finds them there and points CMake at them.
# Idempotent and offline once done. On failure it prints one line and exits 1.
set -uo pipefail

MIN=1.3.261                  # what llama.cpp b11434 needs (vk::LayerSettingEXT)
HEADERS_SUITE=trixie         # the Debian release whose headers are new enough
CACHE="${BENCHKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchkit}"
PRIVATE="$CACHE/vulkan-headers"

fail() { echo "vulkan-deps: $*" >&2; exit 1; }

# "1.3.239" from a vulkan_core.h, or nothing.
header_version() {
  local h="$1/vulkan/vulkan_core.h" patch majmin
  [ -f "$h" ] || return 0
  patch=$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]\+\).*/\1/p' "$h" | head -1)
  majmin=$(sed -n 's/^#define VK_HEADER_VERSION_COMPLETE VK_MAKE_API_VERSION([0-9]\+, *\([0-9]\+\), *\([0-9]\+\),.*/\1.\2/p' "$h" | head -1)
  [ -n "$patch" ] && [ -n "$majmin" ] && echo "$majmin.$patch"
}
at_least() { [ "$(printf '%s\n%s\n' "$MIN" "$1" | sort -V | head -1)" = "$MIN" ]; }

[ -r /etc/os-release ] && . /etc/os-release
[ "${ID:-}" = debian ] && command -v apt-get >/dev/null \
  || fail "not Debian (${PRETTY_NAME:-unknown}): install glslc, SPIRV-Headers, a Vulkan loader, headers >= $MIN and a Vulkan driver yourself."

# 1. The system release's packages (their headers may be too old; step 2 handles that).
need=()
for pkg in glslc libvulkan-dev spirv-headers mesa-vulkan-drivers; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || fail "needs root to apt-get install ${need[*]}: run sudo $0."
    SUDO="sudo -n"
  fi
  log=$(mktemp)
  # --no-upgrade: packages already installed stay at their version.
  if ! { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -qq --no-upgrade --no-install-recommends "${need[@]}"; } >"$log" 2>&1; then
    fail "apt-get install ${need[*]} failed: $(grep -E '^(E|W):' "$log" | head -1 || tail -1 "$log")"
  fi
  rm -f "$log"
fi

# 2. Headers new enough: the system's (Debian 13), else a private copy in the cache.
sys_v=$(header_version /usr/include)
[ -n "$sys_v" ] || fail "libvulkan-dev is installed but /usr/include/vulkan/vulkan_core.h is missing."
at_least "$sys_v" && exit 0
for inc in "$PRIVATE"/*/usr/include; do
  v=$(header_version "$inc")
  [ -n "$v" ] && at_least "$v" && exit 0
done

# Download (never install) $HEADERS_SUITE's libvulkan-dev with a private apt configuration:
# the system's sources, pins and package state are not touched.
arch=$(dpkg --print-architecture)
mirror=$(apt-cache policy 2>/dev/null | awk -v s="${VERSION_CODENAME:-bookworm}/main" \
  '$3 == s && $2 ~ /^https?:/ && $2 !~ /security/ {print $2; exit}')
mirror=${mirror:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || fail "$keyring missing: cannot verify Debian $HEADERS_SUITE's packages (apt-get install debian-archive-keyring)."
work="$PRIVATE/.apt"
rm -rf "$work"
mkdir -p "$work"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d,deb}
: >"$work/status"
echo "deb [arch=$arch signed-by=$keyring] $mirror $HEADERS_SUITE main" >"$work/etc/sources.list"
apt_opts=(
  -o "Dir::Etc::SourceList=$work/etc/sources.list" -o "Dir::Etc::SourceParts=$work/etc/sources.list.d"
  -o "Dir::Etc::Preferences=$work/etc/preferences" -o "Dir::Etc::PreferencesParts=$work/etc/preferences.d"
  -o "Dir::State::Lists=$work/lists" -o "Dir::State::status=$work/status" -o "Dir::Cache=$work/cache"
  -o "APT::Architecture=$arch" -o "APT::Architectures=$arch" -o "APT::Sandbox::User=$(id -un)"
  -o "Debug::NoLocking=1"
)
log="$work/log"
apt-get "${apt_opts[@]}" update >"$log" 2>&1 \
  || fail "could not read Debian $HEADERS_SUITE's package index from $mirror: $(grep -E '^(E|W):' "$log" | head -1)"
ver=$(apt-cache "${apt_opts[@]}" show libvulkan-dev 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[ -n "$ver" ] || fail "Debian $HEADERS_SUITE at $mirror has no libvulkan-dev."
(cd "$work/deb" && apt-get "${apt_opts[@]}" download "libvulkan-dev=$ver") >>"$log" 2>&1 \
  || fail "apt-get download of $HEADERS_SUITE's libvulkan-dev $ver failed: $(grep -E '^(E|W):' "$log" | head -1)"
dest="$PRIVATE/$ver"
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
dpkg -x "$work"/deb/libvulkan-dev_*.deb "$dest.tmp" || fail "dpkg -x of $HEADERS_SUITE's libvulkan-dev $ver failed."
# Keep only the headers: its usr/lib (libvulkan.so -> a 1.4 loader, vulkan.pc) is not here;
# the build links the system's own loader.
rm -rf "$dest.tmp/usr/lib"
v=$(header_version "$dest.tmp/usr/include")
at_least "${v:-0}" || fail "$HEADERS_SUITE's libvulkan-dev $ver has headers ${v:-of no version}, not >= $MIN."
rm -rf "$dest" && mv "$dest.tmp" "$dest" && rm -rf "$work"
echo "vulkan-deps: Vulkan headers $v (Debian $HEADERS_SUITE libvulkan-dev $ver) in $dest/usr/include; the system's are $sys_v"
