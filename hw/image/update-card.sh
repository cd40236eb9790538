#!/usr/bin/env bash
# A new tileclock image onto a clock's card, keeping the clock: its settings, journal and SSH host
# keys live on the data partition (the third), which this leaves as it is, with the partition
# table. Only the firmware and root partitions are written. Run on the director's laptop:
#
#   sudo hw/image/update-card.sh tileclock-NEW-arm64.img.xz /dev/sdX   # the card, not a partition
#
# It refuses a card whose first two partitions are not where the image has them (a card flashed
# from another layout: export its records, then flash it whole). A cut-off run (the card pulled,
# the laptop's power) leaves the data partition whole: run it again.
set -euo pipefail

say() { printf '%s\n' "$*"; }
die() {
  printf 'update-card: %s\n' "$*" >&2
  exit 1
}
[ $# = 2 ] || die "usage: $0 IMAGE.img.xz CARD (a whole card, e.g. /dev/sdX, or a card image file)"
IMAGE=$1 CARD=$2
[ -e "$IMAGE" ] || die "no image $IMAGE"
[ -e "$CARD" ] || die "no card $CARD"
export PATH=$PATH:/usr/sbin:/sbin
if [ -b "$CARD" ] && grep -q "^$CARD" /proc/mounts; then
  die "$CARD has mounted partitions: unmount them first (the laptop may have opened the card)"
fi

# the image's bytes, from the .img.xz (or a plain .img)
unpack() { case "$IMAGE" in *.xz) xz -dc "$IMAGE" ;; *) cat "$IMAGE" ;; esac; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The image's table: its first sectors are enough (the partitions start at 4 MiB)
unpack | head -c 4194304 >"$WORK/head.img" || true
layout() { sfdisk -d "$1" | sed -n 's/^[^ ]*\([123]\) : start= *\([0-9]*\), size= *\([0-9]*\),.*/\1 \2 \3/p'; }
read -r -a image_rows <<<"$(layout "$WORK/head.img" | tr '\n' ' ')"
read -r -a card_rows <<<"$(layout "$CARD" | tr '\n' ' ')"
[ "${#image_rows[@]}" = 9 ] || die "$IMAGE is not a tileclock image (three partitions)"
[ "${#card_rows[@]}" = 9 ] || die "$CARD does not hold a tileclock card's three partitions"
# partitions 1 and 2 where the image has them, and the data partition starting where it does
if [ "${image_rows[*]:0:8}" != "${card_rows[*]:0:8}" ]; then
  die "$CARD's partitions are not where this image has them: export its records, then flash it whole"
fi
data_start=${image_rows[7]}
first=${image_rows[1]}
say "writing the firmware and root partitions of $(basename "$IMAGE") to $CARD (sectors $first to $((data_start - 1)));"
say "the partition table and the data partition (settings, journal, SSH keys) stay as they are"
# 1 MiB blocks: both offsets are whole MiB (hw/image/build.sh lays them out so)
unpack | dd of="$CARD" bs=1M iflag=fullblock skip=$((first / 2048)) seek=$((first / 2048)) \
  count=$(((data_start - first) / 2048)) conv=notrunc,fsync status=none
sync
say "done: the clock boots the new image with its own settings and records"
