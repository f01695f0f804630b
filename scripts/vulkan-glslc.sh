#!/usr/bin/env bash
# A glslc new enough for the shaders that use GPU matrix cores, without touching the system.
# Debian 12's glslc (shaderc 2023.2) supports none of GL_KHR_cooperative_matrix,
# GL_NV_cooperative_matrix2 or GL_EXT_integer_dot_product, so a Vulkan llama-server built with
# it runs every matrix product on plain shader arithmetic: fine on llvmpipe, a handicap on an
# NVIDIA or AMD GPU. This downloads (never installs) Debian 13's glslc with the libraries it
# needs, its own C library included (Debian 12's is too old for it), into
# $CACHE/glslc/<version>/root, and writes $CACHE/glslc/<version>/glslc, which runs it through
# that C library's loader. `python -m benchkit.provide vulkan --portable` uses it.
# Idempotent and offline once done. On failure it prints one line and exits 1.
set -uo pipefail

SUITE=trixie
CACHE="${BENCHKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchkit}"
DEST="$CACHE/glslc"
fail() { echo "vulkan-glslc: $*" >&2; exit 1; }

for g in "$DEST"/*/glslc; do
  [ -x "$g" ] && "$g" --version >/dev/null 2>&1 && { echo "vulkan-glslc: $g"; exit 0; }
done

[ -r /etc/os-release ] && . /etc/os-release
[ "${ID:-}" = debian ] && command -v apt-get >/dev/null || fail "not Debian: bring a glslc from shaderc 2024 or newer yourself."
arch=$(dpkg --print-architecture)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || fail "$keyring missing (apt-get install debian-archive-keyring)."
work="$DEST/.apt"
rm -rf "$work"
mkdir -p "$work"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d,deb}
: >"$work/status"
echo "deb [arch=$arch signed-by=$keyring] http://deb.debian.org/debian $SUITE main" >"$work/etc/sources.list"
apt_opts=(
  -o "Dir::Etc::SourceList=$work/etc/sources.list" -o "Dir::Etc::SourceParts=$work/etc/sources.list.d"
  -o "Dir::Etc::Preferences=$work/etc/preferences" -o "Dir::Etc::PreferencesParts=$work/etc/preferences.d"
  -o "Dir::State::Lists=$work/lists" -o "Dir::State::status=$work/status" -o "Dir::Cache=$work/cache"
  -o "APT::Architecture=$arch" -o "APT::Architectures=$arch" -o "APT::Sandbox::User=$(id -un)"
  -o "Debug::NoLocking=1"
)
log="$work/log"
apt-get "${apt_opts[@]}" update >"$log" 2>&1 || fail "could not read Debian $SUITE's package index: $(grep -E '^(E|W):' "$log" | head -1)"
ver=$(apt-cache "${apt_opts[@]}" show glslc 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[ -n "$ver" ] || fail "Debian $SUITE has no glslc."
# glslc, its shaderc library, and the C and C++ runtimes it was built against.
(cd "$work/deb" && apt-get "${apt_opts[@]}" download glslc libshaderc1 libc6 libgcc-s1 libstdc++6) >>"$log" 2>&1 \
  || fail "apt-get download failed: $(grep -E '^(E|W):' "$log" | head -1)"
out="$DEST/$ver"
rm -rf "$out.tmp" && mkdir -p "$out.tmp/root"
for f in "$work"/deb/*.deb; do dpkg -x "$f" "$out.tmp/root" || fail "dpkg -x $f failed."; done
cat >"$out.tmp/glslc" <<'EOF'
#!/bin/sh
# Debian 13's glslc run through Debian 13's own C library (scripts/vulkan-glslc.sh).
R=$(dirname "$(readlink -f "$0")")/root
L=$R/usr/lib/x86_64-linux-gnu
exec "$L/ld-linux-x86-64.so.2" --library-path "$L" "$R/usr/bin/glslc" "$@"
EOF
chmod +x "$out.tmp/glslc"
"$out.tmp/glslc" --version >/dev/null 2>&1 || fail "Debian $SUITE's glslc $ver does not run here."
rm -rf "$out" && mv "$out.tmp" "$out" && rm -rf "$work"
echo "vulkan-glslc: $out/glslc ($("$out/glslc" --version | head -1))"
