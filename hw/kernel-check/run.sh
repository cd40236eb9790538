#!/usr/bin/env bash
# make pi-kernel-check: the gpiod backend on a real Linux kernel's GPIO character device.
#
# Boots Debian's own kernel in QEMU (TCG: no KVM needed) with a busybox initramfs that holds this
# clone's Python, .venv and firmware, so the VM runs this clone's `tileclock run` against the
# kernel's gpio-sim lines (hw/kernel-check/inside.py says what is checked). Debian's stock kernel has no gpio-sim: it is built here out of tree from Debian's
# linux-source with the packaged headers. Needs root (apt-get) on Debian bookworm, amd64.
# What can be kept (the kernel and its modules, the built gpio-sim) is cached in
# ${XDG_CACHE_HOME:-~/.cache}/tileclock/kernel-check/. Exits non-zero when anything is missing or wrong.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
clone=$(cd "$here/../.." && pwd)
python=${PYTHON_VENV:-$clone/.venv/bin/python}
cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tileclock/kernel-check
fail() { echo "pi-kernel-check: FAIL: $*" >&2; exit 1; }
say() { echo "pi-kernel-check: $*" >&2; }
started=$(date +%s)

[ "$(uname -m)" = x86_64 ] || fail "this check boots an amd64 kernel; this machine is $(uname -m)"
[ -x "$python" ] || fail "no $python: run it through make (make pi-kernel-check makes .venv)"
"$python" -c 'import gpiod' 2>/dev/null || fail "gpiod does not import in $python (pip install -e '.[test]')"

# -- Debian's packages: QEMU, busybox, kmod, the kernel's headers and source ---------------------
kver=${KERNEL_CHECK_KVER:-}
if [ -z "$kver" ]; then
  # the kernel that linux-image-amd64 names (what a fresh bookworm installs), as apt knows it
  kver=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
  if [ -z "$kver" ]; then
    apt-get update -qq || true
    kver=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
  fi
fi
[ -n "$kver" ] || fail "apt knows no linux-image-amd64 (no Debian package lists?)"
series=${kver%%-*}                # 6.1.0 -> the source package is linux-source-6.1
series=${series%.*}
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
# the initramfs has no libraries: its busybox must be the static one
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || need+=(busybox-static)
command -v depmod >/dev/null || need+=(kmod)
command -v cpio >/dev/null || need+=(cpio)
[ -d "/usr/src/linux-headers-$kver" ] || need+=("linux-headers-$kver")
[ -f "/usr/src/linux-source-$series.tar.xz" ] || [ -f "$cache/$kver/gpio-sim.ko" ] || need+=("linux-source-$series")
command -v gcc >/dev/null && command -v make >/dev/null || need+=(gcc make)
if [ "${#need[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "needs Debian packages ${need[*]}: run as root, or sudo apt-get install them"
  say "installing ${need[*]} (Debian's packages)"
  apt-get -qq update || true
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
    "${need[@]}" >/dev/null || fail "apt-get install ${need[*]} failed"
fi
ldd /bin/busybox >/dev/null 2>&1 && fail "/bin/busybox is not static: apt-get install busybox-static"

# -- the kernel image, unpacked (never installed: this machine's boot is not touched) ------------
mkdir -p "$cache/$kver"
root=$cache/$kver/image
if [ ! -f "$root/boot/vmlinuz-$kver" ]; then
  say "fetching linux-image-$kver"
  rm -rf "$root" "$cache/$kver"/*.deb
  (cd "$cache/$kver" && apt-get download -q "linux-image-$kver" >/dev/null 2>&1) ||
    fail "apt-get download linux-image-$kver failed"
  dpkg-deb -x "$cache/$kver"/linux-image-"$kver"_*.deb "$root" && rm -f "$cache/$kver"/*.deb
  depmod -b "$root" "$kver"
fi

# -- gpio-sim, built out of tree when the kernel lacks it -----------------------------------------
sim=$cache/$kver/gpio-sim.ko
if grep -q '^CONFIG_GPIO_SIM=[ym]' "$root/boot/config-$kver"; then
  sim="" # the kernel has it: modprobe from its own modules below
elif [ ! -f "$sim" ]; then
  say "building gpio-sim for $kver from linux-source-$series (the kernel has no CONFIG_GPIO_SIM)"
  build=$(mktemp -d)
  src=linux-source-$series
  nice -n 10 tar -xJf "/usr/src/$src.tar.xz" -C "$build" "$src/drivers/gpio/gpio-sim.c" \
    "$src/drivers/gpio/gpiolib.h" "$src/kernel/irq/irq_sim.c" || fail "gpio-sim's source is not in $src"
  cp "$build/$src/drivers/gpio/gpio-sim.c" "$build/sim_main.c"
  cp "$build/$src/drivers/gpio/gpiolib.h" "$build/"
  kernel_has_irq_sim=$(grep -c '^CONFIG_IRQ_SIM=y' "$root/boot/config-$kver" || true)
  objects="sim_main.o"
  if [ "$kernel_has_irq_sim" = 0 ]; then
    # irq_sim.c calls irq_to_desc, which 6.1 does not export; generic_handle_irq runs the same
    # handler (handle_simple_irq, set when the sim domain maps the irq) and is exported
    sed 's/handle_simple_irq(irq_to_desc(irqnum))/generic_handle_irq(irqnum)/' \
      "$build/$src/kernel/irq/irq_sim.c" > "$build/irq_sim.c"
    grep -q 'generic_handle_irq(irqnum)' "$build/irq_sim.c" || fail "irq_sim.c changed: patch it anew"
    objects="$objects irq_sim.o"
  fi
  printf 'obj-m := gpio-sim.o\ngpio-sim-y := %s\n' "$objects" > "$build/Kbuild"
  nice -n 10 make -s -C "/usr/src/linux-headers-$kver" M="$build" modules > "$build/make.log" 2>&1 ||
    { cat "$build/make.log" >&2; fail "building gpio-sim failed"; }
  grep -i "undefined" "$build/make.log" >&2 && fail "gpio-sim needs symbols $kver does not export"
  cp "$build/gpio-sim.ko" "$sim"
  rm -rf "$build"
fi

# -- the initramfs: static busybox, configfs and gpio-sim, our /init, and this clone's Python ----
# The Python, its libraries, .venv's run-time packages and firmware/ are packed at the paths they
# have here (hw/kernel-check/pack.py lists them): the VM reads no file over a shared folder, which
# under TCG made each Python start take half a minute.
initrd=$cache/$kver/initrd.cpio
tree=$(mktemp -d)
mkdir -p "$tree"/{bin,dev,proc,sys,etc,run,tmp,kc/modules}
cp /bin/busybox "$tree/bin/busybox"
cp "$here/init.sh" "$tree/init" && chmod +x "$tree/init"
mods=$root/lib/modules/$kver
: > "$tree/kc/modules/order"
for module in kernel/fs/configfs/configfs.ko; do
  [ -f "$mods/$module" ] || fail "$kver has no $module"
  cp "$mods/$module" "$tree/kc/modules/" && basename "$module" >> "$tree/kc/modules/order"
done
if [ -n "$sim" ]; then
  cp "$sim" "$tree/kc/modules/gpio-sim.ko"
else
  cp "$mods/kernel/drivers/gpio/gpio-sim.ko" "$tree/kc/modules/" || fail "$kver lists gpio-sim but has no module"
fi
echo gpio-sim.ko >> "$tree/kc/modules/order"
(cd "$tree" && find . | cpio -o -H newc --quiet) > "$initrd"
rm -rf "$tree"
"$python" "$here/pack.py" "$clone" | (cd / && sed -z 's|^/||' | cpio -0 -o -H newc --quiet) >> "$initrd" ||
  fail "packing this clone's Python into the initramfs failed"
say "initramfs: $(($(stat -c %s "$initrd") / 1048576)) MiB"

# -- boot it ------------------------------------------------------------------------------------
log=$(mktemp)
accel=${KERNEL_CHECK_ACCEL:-tcg} # KVM may be missing or hang in CI: TCG is enough (a few s to boot)
say "booting $kver in QEMU ($accel); the check runs inside"
set +e
# at the machine's usual priority, not niced like the build: the check times edges written tens of
# microseconds apart, and a VM starved of its core stalls between them
timeout --foreground -k 10 "${KERNEL_CHECK_TIMEOUT:-540}" qemu-system-x86_64 \
  -accel "$accel" -m 1536 -smp 2 -nographic -no-reboot -nodefaults -serial stdio \
  -kernel "$root/boot/vmlinuz-$kver" -initrd "$initrd" \
  -append "console=ttyS0 quiet panic=-1 kc.clone=$clone kc.python=$python" \
  < /dev/null 2>&1 | tee "$log"
qemu=${PIPESTATUS[0]}
set -e
result=$(tr -d '\r' < "$log" | sed -n 's/^KERNEL-CHECK-EXIT=\([0-9]*\)$/\1/p' | tail -1)
counts=$(tr -d '\r' < "$log" | sed -n 's/^KERNEL-CHECK-COUNTS=\([0-9]*\) \([0-9]*\)$/\1 passed, \2 failed/p' | tail -1)
rm -f "$log"
elapsed=$(($(date +%s) - started))
[ "$qemu" = 124 ] && fail "the VM did not finish within ${KERNEL_CHECK_TIMEOUT:-540} s (${elapsed} s in all)"
[ -n "$result" ] || fail "the VM stopped without a verdict (QEMU exit $qemu, ${elapsed} s in all)"
# the last line is the plain count of the checks, as CI reads a test run's closing line
if [ "$result" != 0 ] || [ -z "$counts" ]; then
  echo "pi-kernel-check: FAIL: the check inside the VM failed (exit $result; ${elapsed} s in all)" >&2
  echo "pi-kernel-check: ${counts:-0 passed, 1 failed}"
  exit 1
fi
say "PASS in ${elapsed} s"
echo "pi-kernel-check: $counts"
