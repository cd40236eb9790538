#!/usr/bin/env bash
# A plain Debian bookworm root for ARCH (arm64 or armhf), built once under qemu-user-static and kept.
#
#   systemd/pi-root.sh ARCH      # prints the path of the root's tarball, building it if it is missing
#
# The tarball lives in ${TILECLOCK_ROOTS:-~/.cache/tileclock/roots}, named after what it holds (suite,
# architecture, variant, packages, mirror), so a changed recipe builds a new one and never reuses a
# stale one. Needs root, debootstrap, qemu-user-static and binfmt-support (installed when missing).
set -euo pipefail

ARCH=${1:?usage: $0 arm64|armhf}
case "$ARCH" in arm64 | armhf) ;; *) echo "$0: ARCH is arm64 or armhf, not $ARCH" >&2; exit 2 ;; esac
SUITE=bookworm
VARIANT=minbase
# what Raspberry Pi OS Lite has that the install relies on: sudo (the builder runs `sudo install.sh`)
INCLUDE=sudo
ROOTS=${TILECLOCK_ROOTS:-${XDG_CACHE_HOME:-$HOME/.cache}/tileclock/roots}

[ "$(id -u)" = 0 ] || { echo "$0: debootstrap and chroot need root" >&2; exit 1; }

# the machine's own Debian mirror (its apt sources), so the root comes from where apt already goes
mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '$2 ~ /\/debian\/?$/ {print $2; exit}')
[ -n "$mirror" ] || mirror=$(grep -hs '^deb ' /etc/apt/sources.list | awk '$3 == "bookworm" {print $2; exit}')
[ -n "$mirror" ] || { echo "$0: no Debian mirror in the apt sources" >&2; exit 1; }

key=$(printf '%s\n' "$SUITE" "$ARCH" "$VARIANT" "$INCLUDE" "$mirror" | sha256sum | cut -c1-12)
tarball="$ROOTS/$SUITE-$ARCH-$key.tar"
if [ -s "$tarball" ]; then
  echo "$tarball"
  exit 0
fi

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /usr/bin/qemu-aarch64-static ] || need+=(qemu-user-static)
command -v update-binfmts >/dev/null || need+=(binfmt-support)
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing ${need[*]} from Debian" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi
# binfmt_misc lets the kernel run the root's ARM programs through qemu (a container may lack it)
[ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
qemu=$([ "$ARCH" = arm64 ] && echo qemu-aarch64 || echo qemu-arm)
[ -e "/proc/sys/fs/binfmt_misc/$qemu" ] || update-binfmts --enable "$qemu" >&2 || true
[ -e "/proc/sys/fs/binfmt_misc/$qemu" ] || { echo "$0: binfmt_misc has no $qemu: ARM programs cannot run here" >&2; exit 1; }

mkdir -p "$ROOTS"
build=$(mktemp -d "$ROOTS/build-$ARCH.XXXXXX")
trap 'rm -rf "$build"' EXIT
echo "debootstrap $SUITE $ARCH ($VARIANT, with $INCLUDE): several minutes under qemu" >&2
start=$(date +%s)
nice -n 10 debootstrap --arch="$ARCH" --variant="$VARIANT" --include="$INCLUDE" "$SUITE" "$build/root" "$mirror" \
  >"$build/debootstrap.log" 2>&1 || { tail -20 "$build/debootstrap.log" >&2; exit 1; }
chroot "$build/root" apt-get clean
tar --numeric-owner -C "$build/root" -cf "$tarball.partial" .
mv "$tarball.partial" "$tarball"
echo "built in $(($(date +%s) - start)) s: $tarball" >&2
echo "$tarball"
