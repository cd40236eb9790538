#!/usr/bin/env bash
# make image: tileclock-VERSION-arm64.img.xz, a card for the Pi 3 B/B+, Zero 2 W and 4 B, built from
# Debian bookworm's arm64 packages and this checkout's own wheel (docs/build-guide.md).
#
#   hw/image/build.sh [OUTDIR]      # default OUTDIR: hw/image/out
#
# No loop device, mount or device-mapper: the root is made with debootstrap under
# qemu-user-static, each partition is made as a file (mkfs.vfat -C + mcopy, mkfs.ext4 -d) and put
# into the card's file with dd. Runs as root (debootstrap and chroot need it). The slow stages are
# cached in $TILECLOCK_CACHE (default ~/.cache/tileclock/image), keyed by their inputs.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
OUT=$(realpath -m "${1:-$HERE/out}")
CACHE=${TILECLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tileclock/image}

say() { printf '%s\n' "$*"; }
die() {
  printf 'make image: %s\n' "$*" >&2
  exit 1
}

# The card's layout, in 512-byte sectors. The root is read-only (an overlay in RAM on top, see
# docs/build-guide.md); the data partition, last, holds settings, journal and SSH keys and grows to
# fill the card at first boot.
FIRMWARE_START=8192
FIRMWARE_MIB=256
ROOT_MIB=${TILECLOCK_ROOT_MIB:-1400}
DATA_MIB=64
LABEL_FIRMWARE=TILEBOOT
LABEL_ROOT=tileroot
LABEL_DATA=tiledata

. "$HERE/stages.sh"

need_tools() {
  local missing=() tool package
  for pair in debootstrap:debootstrap sfdisk:fdisk mkfs.vfat:dosfstools mcopy:mtools \
    mkfs.ext4:e2fsprogs xz:xz-utils fdtput:device-tree-compiler; do
    tool=${pair%%:*} package=${pair#*:}
    PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null || missing+=("$package")
  done
  [ -e /usr/bin/qemu-aarch64-static ] || [ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] ||
    missing+=(qemu-user-static)
  command -v update-binfmts >/dev/null || missing+=(binfmt-support)
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing Debian's ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  # arm64 programs run through binfmt_misc (the F flag: no emulator copied into the root)
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
    die "arm64 programs cannot run here: binfmt_misc has no qemu-aarch64 (update-binfmts --enable qemu-aarch64)"
}

[ "$(id -u)" = 0 ] || die "run it as root (debootstrap and chroot need it): sudo make image"
export PATH=$PATH:/usr/sbin:/sbin
need_tools
mkdir -p "$CACHE" "$OUT"
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$SRC/firmware/tileclock/__init__.py")
[ -n "$VERSION" ] || die "no __version__ in firmware/tileclock/__init__.py"
NAME=tileclock-$VERSION-arm64
started=$(date +%s)

stage_base
stage_kernel
stage_initrd

WORK=$(mktemp -d "$CACHE/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/root
say "the image's root: a copy of the cached one, then tileclock"
cp -a "$INITRD_DIR" "$ROOT"

# the project's wheel, built here from this checkout (pure Python)
python3 -m pip wheel --quiet --no-deps --no-build-isolation -w "$WORK/wheel" "$SRC" 2>/dev/null ||
  python3 -m pip wheel --quiet --no-deps -w "$WORK/wheel" "$SRC"
WHEEL=$(ls "$WORK"/wheel/tileclock-*.whl)
. "$HERE/finish.sh"
finish_root "$ROOT" "$WHEEL"

. "$HERE/assemble.sh"
assemble "$ROOT" "$OUT/$NAME.img"

rm -f "$OUT/$NAME.img.xz"
if [ "${TILECLOCK_XZ:-1}" = 0 ]; then
  # while working on the image: hw/image/check.sh boots the .img as it is
  say "not compressed (TILECLOCK_XZ=0): $OUT/$NAME.img"
  exit 0
fi
say "compressing (xz)"
nice -n 10 xz -T2 -6 -k "$OUT/$NAME.img"
ended=$(date +%s)
say "made $OUT/$NAME.img.xz: $(du -m "$OUT/$NAME.img.xz" | cut -f1) MB" \
  "($(du -m --apparent-size "$OUT/$NAME.img" | cut -f1) MB card image, $(du -m "$OUT/$NAME.img" | cut -f1) MB allocated)" \
  "in $((ended - started)) s"
