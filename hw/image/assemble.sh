# The card from a finished root (sourced by build.sh): three partitions, each made as a file and
# put in place with dd. No loop device, no mount: mkfs.vfat -C + mcopy for the firmware,
# mkfs.ext4 -d for the root and the data partition.

# The data partition's first contents: settings and journal folders with their owners and modes.
data_tree() {
  local data=$1
  mkdir -p "$data/etc/tileclock" "$data/state" "$data/ssh" "$data/wifi"
  install -m 0640 "$SRC/systemd/config.toml" "$data/etc/tileclock/config.toml"
  chown 0:"$TILECLOCK_GID" "$data/etc/tileclock" "$data/etc/tileclock/config.toml"
  chmod 0750 "$data/etc/tileclock"
  chown "$TILECLOCK_UID:$TILECLOCK_GID" "$data/state"
  chmod 0750 "$data/state"
  chmod 0700 "$data/ssh" "$data/wifi"
}

assemble() {
  local root=$1 image=$2 fat=$WORK/firmware.vfat rootfs=$WORK/root.ext4 datafs=$WORK/data.ext4
  local root_start data_start end
  root_start=$((FIRMWARE_START + FIRMWARE_MIB * 2048))
  data_start=$((root_start + ROOT_MIB * 2048))
  end=$((data_start + DATA_MIB * 2048))

  say "partitions: firmware ${FIRMWARE_MIB} MiB (FAT32), root ${ROOT_MIB} MiB, data ${DATA_MIB} MiB (ext4)"
  rm -f "$fat" "$rootfs" "$datafs"
  mkfs.vfat -F 32 -n "$LABEL_FIRMWARE" -C "$fat" $((FIRMWARE_MIB * 1024)) >/dev/null
  # the firmware partition's files, then an empty mount point in the root
  mcopy -s -p -m -i "$fat" "$root"/boot/firmware/* ::/
  mkdir -p "$WORK/firmware"
  mv "$root"/boot/firmware/* "$WORK/firmware/"
  mkdir -p "$root/data"

  truncate -s "${ROOT_MIB}M" "$rootfs"
  nice -n 10 mkfs.ext4 -q -L "$LABEL_ROOT" -d "$root" "$rootfs" ||
    die "mkfs.ext4 -d: the root does not fit ${ROOT_MIB} MiB (TILECLOCK_ROOT_MIB)"
  mv "$WORK"/firmware/* "$root/boot/firmware/"

  data_tree "$WORK/data"
  truncate -s "${DATA_MIB}M" "$datafs"
  mkfs.ext4 -q -L "$LABEL_DATA" -d "$WORK/data" "$datafs"

  # every partition starts on a whole MiB, so dd writes in 1 MiB blocks
  rm -f "$image"
  truncate -s $((end * 512)) "$image"
  sfdisk --quiet "$image" <<EOF
label: dos
unit: sectors
start=$FIRMWARE_START, size=$((FIRMWARE_MIB * 2048)), type=c, bootable
start=$root_start, size=$((ROOT_MIB * 2048)), type=83
start=$data_start, size=$((DATA_MIB * 2048)), type=83
EOF
  dd if="$fat" of="$image" bs=1M seek=$((FIRMWARE_START / 2048)) conv=notrunc,sparse status=none
  dd if="$rootfs" of="$image" bs=1M seek=$((root_start / 2048)) conv=notrunc,sparse status=none
  dd if="$datafs" of="$image" bs=1M seek=$((data_start / 2048)) conv=notrunc,sparse status=none
  rm -f "$fat" "$rootfs" "$datafs"
}
