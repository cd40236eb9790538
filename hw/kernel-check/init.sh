#!/bin/busybox sh
# /init of the kernel check's initramfs (hw/kernel-check/run.sh builds it): load configfs and
# gpio-sim, mount what the check needs, run it with this clone's Python (packed in the initramfs
# at the paths it has on the host), print its exit code, then power off.
/bin/busybox mkdir -p /proc /sys /dev /run /tmp /etc
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm /run/kc/home /run/kc/tmp
mount -t devpts devpts /dev/pts
verdict() { echo "KERNEL-CHECK-EXIT=$1"; sync; poweroff -f; }
for module in $(cat /kc/modules/order); do
  insmod "/kc/modules/$module" || { echo "kernel-check: insmod $module failed"; verdict 3; }
done
mount -t configfs configfs /sys/kernel/config || { echo "kernel-check: no configfs"; verdict 3; }
clone=$(sed -n 's/.*kc\.clone=\([^ ]*\).*/\1/p' /proc/cmdline)
python=$(sed -n 's/.*kc\.python=\([^ ]*\).*/\1/p' /proc/cmdline)
# gpiozero maps BCM numbers to a Pi's header from the board's revision code: the VM says it is a
# Pi 3B (a02082) in a copy of /proc/cpuinfo mounted over it, so GPIO17 is line 17 of the chip
{ cat /proc/cpuinfo; printf 'Revision\t: a02082\n'; } > /run/kc/cpuinfo
mount --bind /run/kc/cpuinfo /proc/cpuinfo
printf 'root:x:0:0:root:/root:/bin/sh\n' > /etc/passwd
printf 'root:x:0:\n' > /etc/group
env -i PATH=/bin:/usr/bin HOME=/run/kc/home TMPDIR=/run/kc/tmp PYTHONDONTWRITEBYTECODE=1 \
  "$python" "$clone/hw/kernel-check/inside.py"
verdict $?
