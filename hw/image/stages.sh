# The cached stages of `make image` (sourced by build.sh): the debootstrap root, then the kernel and
# firmware in it, then its initramfs. Each lives in $CACHE under a key made of its inputs, so a
# changed package list builds that stage afresh and an unchanged one costs a copy.

SUITE=bookworm
ARCH=arm64
MIRROR=${TILECLOCK_MIRROR:-http://deb.debian.org/debian}
COMPONENTS=main,non-free-firmware
# bump when a stage's commands change in a way its other inputs don't show
STAGE_FORMAT=1

# The packages of one stage (base or kernel) from packages.txt, space-separated.
packages_of() {
  sed -n "s/#.*//; s/^$1 //p" "$HERE/packages.txt" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'
}

key_of() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

# Run a command inside the arm64 root (qemu-user-static through binfmt_misc, no mounts).
in_root() {
  local root=$1
  shift
  # a clean environment: the host's (pip's index and CA settings, proxies) mean nothing in there
  nice -n 10 env -i LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive HOME=/root TERM=dumb \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" "$@"
}

# Without /proc in the root, `ischroot` cannot tell (exit 2), and raspi-firmware's scripts then
# insist that /boot/firmware be a mounted partition. It is a chroot: while the image is made,
# ischroot is diverted to `true` (`held on`), and put back after (`held off`).
chroot_said() {
  local root=$1
  if [ "$2" = on ]; then
    in_root "$root" dpkg-divert --local --rename --add /usr/bin/ischroot >/dev/null
    ln -sfn /bin/true "$root/usr/bin/ischroot"
  else
    rm -f "$root/usr/bin/ischroot"
    in_root "$root" dpkg-divert --local --rename --remove /usr/bin/ischroot >/dev/null
  fi
}

# Stage base: debootstrap's root, minbase plus the image's userland. Prints its directory.
stage_base() {
  local pkgs key dir tmp
  pkgs=$(packages_of base)
  key=$(key_of "$STAGE_FORMAT" "$SUITE" "$ARCH" "$MIRROR" "$COMPONENTS" "$pkgs")
  dir=$CACHE/root-base-$key
  if [ -d "$dir" ]; then
    say "base root: cached ($dir)"
  else
    tmp=$CACHE/tmp-base-$key
    rm -rf "$tmp"
    say "base root: debootstrap $SUITE $ARCH (a few minutes under qemu-user-static)"
    nice -n 10 debootstrap --arch="$ARCH" --variant=minbase --components="$COMPONENTS" \
      --include="${pkgs// /,}" "$SUITE" "$tmp" "$MIRROR" >"$CACHE/debootstrap-$key.log" 2>&1 ||
      { tail -20 "$CACHE/debootstrap-$key.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap-$key.log)"; }
    mv "$tmp" "$dir"
  fi
  BASE_KEY=$key
  BASE_DIR=$dir
}

# One cached stage NAME: $CACHE/root-NAME-KEY, made (unless it is there already) from a copy of
# the root FROM by the function STEPS run on that copy, its output in $CACHE/NAME-KEY.log; WHAT
# names it in the progress lines, DOING says what it does. Leaves its directory in STAGE_DIR.
cached_stage() {
  local name=$1 key=$2 from=$3 what=$4 doing=$5 steps=$6 dir tmp log
  dir=$CACHE/root-$name-$key
  if [ -d "$dir" ]; then
    say "$what: cached ($dir)"
  else
    tmp=$CACHE/tmp-$name-$key
    log=$CACHE/$name-$key.log
    rm -rf "$tmp"
    say "$what: $doing"
    cp -a "$from" "$tmp"
    "$steps" "$tmp" >"$log" 2>&1 || { tail -30 "$log" >&2; die "$name stage failed (log: $log)"; }
    mv "$tmp" "$dir"
  fi
  STAGE_DIR=$dir
}

initramfs_conf() {
  (cd "$HERE/root" && find etc/initramfs-tools -type f | sort | xargs cat | sha256sum | cut -c1-16)
}

# Stage kernel: Debian's arm64 kernel and the Pi's firmware, installed with update-initramfs
# diverted (each package would run it again, the slowest part under emulation), then run once.
stage_kernel() {
  local pkgs
  pkgs=$(packages_of kernel)
  KERNEL_KEY=$(key_of "$STAGE_FORMAT" "$BASE_KEY" "$pkgs" "$(initramfs_conf)")
  KERNEL_PKGS=$pkgs
  cached_stage kernel "$KERNEL_KEY" "$BASE_DIR" "kernel and firmware" \
    "apt-get install $pkgs (about 15 minutes under qemu-user-static)" kernel_steps
  KERNEL_DIR=$STAGE_DIR
}

kernel_steps() {
  local tmp=$1 kver
  # no daemon starts in a root that is not booted
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d" &&
    chmod 755 "$tmp/usr/sbin/policy-rc.d" &&
    cp /etc/resolv.conf "$tmp/etc/resolv.conf" &&
    # (the image's own /etc/default/raspi-firmware comes later: build.sh runs its hook again)
    mkdir -p "$tmp/boot/firmware" &&
    # the image's initramfs settings (MODULES=list) before the kernel's one mkinitramfs
    tar -C "$HERE/root" --owner=0 --group=0 -cf - etc/initramfs-tools | tar -C "$tmp" -xf - &&
    chroot_said "$tmp" on &&
    in_root "$tmp" dpkg-divert --local --rename --add /usr/sbin/update-initramfs &&
    ln -s /bin/true "$tmp/usr/sbin/update-initramfs" &&
    in_root "$tmp" apt-get update &&
    in_root "$tmp" apt-get install -y --no-install-recommends $KERNEL_PKGS &&
    rm "$tmp/usr/sbin/update-initramfs" &&
    in_root "$tmp" dpkg-divert --local --rename --remove /usr/sbin/update-initramfs &&
    kver=$(ls "$tmp/lib/modules" | sort -V | tail -1) &&
    echo "update-initramfs for $kver" &&
    in_root "$tmp" update-initramfs -c -k "$kver" &&
    in_root "$tmp" apt-get clean &&
    chroot_said "$tmp" off
}

# Stage initrd: the kernel stage's root with the image's own initramfs settings (MODULES=list and
# the modules a Pi needs for its SD card, hw/image/root/etc/initramfs-tools/) and its initramfs
# made again with them. A stage of its own so that changing the list costs one mkinitramfs, not
# the kernel's apt-get install too.
stage_initrd() {
  local conf
  conf=$(cd "$HERE/root" && find etc/initramfs-tools -type f | sort | xargs cat | sha256sum | cut -c1-16)
  cached_stage initrd "$(key_of "$STAGE_FORMAT" "$KERNEL_KEY" "$conf")" "$KERNEL_DIR" "initramfs" \
    "update-initramfs with the image's module list (a few minutes under qemu-user-static)" initrd_steps
  INITRD_DIR=$STAGE_DIR
}

initrd_steps() {
  local tmp=$1 kver
  tar -C "$HERE/root" --owner=0 --group=0 -cf - etc/initramfs-tools | tar -C "$tmp" -xf - &&
    chroot_said "$tmp" on &&
    kver=$(ls "$tmp/lib/modules" | sort -V | tail -1) &&
    in_root "$tmp" update-initramfs -u -k "$kver" &&
    chroot_said "$tmp" off
}
