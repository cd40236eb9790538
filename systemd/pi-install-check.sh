#!/usr/bin/env bash
# The installer proven on a Debian bookworm root of another architecture, under qemu-user-static.
#
#   sudo systemd/pi-install-check.sh [arm64|armhf]      # `make pi-install-check [ARCH=armhf]`
#
# A fresh copy of a cached root (systemd/pi-root.sh) gets a login `pi` with passwordless sudo and a
# boot partition as Raspberry Pi OS ships it (serial console on, I2C off); then, as that login would:
# `sudo tileclock/systemd/install.sh` (root, SUDO_USER=pi), `tileclock doctor`, and a scripted game with its screens
# drawn, compared record by record and pixel by pixel with the same game on this machine. It prints
# the install's time and the disk it takes, and exits non-zero at the first thing that is not so.
set -euo pipefail

ARCH=${1:-arm64}
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "$0: chroot and mounts need root" >&2; exit 1; }
HOST_TILECLOCK=${HOST_TILECLOCK:-$SRC/.venv/bin/tileclock}
[ -x "$HOST_TILECLOCK" ] || { echo "$0: no $HOST_TILECLOCK: run make tools first" >&2; exit 1; }

say() { printf 'pi-install-check %s: %s\n' "$ARCH" "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

t0=$(date +%s)
tarball=$(bash "$SRC/systemd/pi-root.sh" "$ARCH")
t_root=$(($(date +%s) - t0))
work=$(mktemp -d "${TMPDIR:-/var/tmp}/tileclock-pi-$ARCH.XXXXXX")
root="$work/root"
mounted=()
# a daemon a package's postinst started inside the root (no systemd there: invoke-rc.d falls back
# to the init script) would run on under qemu-user after the check, taking CPU from what runs next
stop_leftovers() {
  local proc left=()
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] || continue
    left+=("$(cat "$proc/comm" 2>/dev/null)") && kill -KILL "${proc#/proc/}" 2>/dev/null || true
  done
  [ "${#left[@]}" -eq 0 ] || say "stopped ${#left[@]} process(es) left running in the root: ${left[*]}"
}
cleanup() {
  local i
  stop_leftovers
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$root"
tar --numeric-owner -C "$root" -xf "$tarball"
for fs in proc sys dev dev/pts; do
  case "$fs" in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sysfs "$root/sys" ;;
    dev) mount --bind /dev "$root/dev" ;;
    dev/pts) mount -t devpts devpts "$root/dev/pts" ;;
  esac
  mounted+=("$root/$fs")
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# this machine's trusted CAs, for pip in the root: a network that inspects TLS signs with its own
pip_cert=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca-certificates.crt"
  pip_cert=(PIP_CERT=/etc/host-ca-certificates.crt)
fi
inside() { chroot "$root" "$@"; }
as_pi() { inside su -l pi -c "$1"; }

# the login Raspberry Pi Imager makes: sudo without a password (Pi OS's 010_pi-nopasswd)
inside useradd -m -s /bin/bash -G sudo pi
echo 'pi ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/010_pi-nopasswd"
chmod 0440 "$root/etc/sudoers.d/010_pi-nopasswd"
# the checkout, as `git clone` leaves it (tracked files)
mkdir "$root/home/pi/tileclock"
git -C "$SRC" ls-files -z | tar -C "$SRC" --null -T - -cf - | tar -C "$root/home/pi/tileclock" -xf -
inside chown -R pi:pi /home/pi/tileclock
# the boot partition as Pi OS Bookworm ships it
mkdir -p "$root/boot/firmware"
printf '%s\n' "# For more options and information see http://rptl.io/configtxt" "dtparam=audio=on" \
  "#dtparam=i2c_arm=on" "camera_auto_detect=1" "[cm4]" "otg_mode=1" "[all]" >"$root/boot/firmware/config.txt"
echo "console=serial0,115200 console=tty1 root=PARTUUID=0 rootfstype=ext4 fsck.repair=yes rootwait" \
  >"$root/boot/firmware/cmdline.txt"

size_mb() { du -sxm "$root" | cut -f1; }
before_mb=$(size_mb)
say "root ready in ${t_root} s ($tarball, $before_mb MB); running tileclock/systemd/install.sh as sudo would for pi"
t1=$(date +%s)
# as `sudo` would run it for pi: root, a clean environment, SUDO_USER. (sudo itself cannot run here:
# under qemu-user a setuid program gains no privileges unless binfmt_misc's C flag is set.)
if ! nice -n 10 chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 "${pip_cert[@]}" SUDO_USER=pi SUDO_UID="$(inside id -u pi)" SUDO_GID="$(inside id -g pi)" \
  /bin/bash -c "cd /home/pi && tileclock/systemd/install.sh" >"$work/install.log" 2>&1; then
  tail -30 "$work/install.log" >&2
  fail "the installer failed"
fi
t_install=$(($(date +%s) - t1))
inside apt-get clean
after_mb=$(size_mb)
say "installed in ${t_install} s; the root is $after_mb MB (+$((after_mb - before_mb)) MB)"
grep -E '^[0-9]/6|^    [^ ]|^done' "$work/install.log" | sed 's/^/  | /'

# what it must have done
grep -q '^console=tty1 root=' "$root/boot/firmware/cmdline.txt" || fail "cmdline.txt still has a serial console"
for line in dtparam=i2c_arm=on dtparam=i2c_arm_baudrate=400000 enable_uart=1; do
  grep -qx "$line" "$root/boot/firmware/config.txt" || fail "no $line in config.txt"
done
[ "$(inside stat -c '%a %U:%G' /etc/tileclock/config.toml)" = "640 root:tileclock" ] ||
  fail "config.toml is $(inside stat -c '%a %U:%G' /etc/tileclock/config.toml), not 640 root:tileclock"
[ -L "$root/etc/systemd/system/multi-user.target.wants/tileclock.service" ] || fail "the service is not enabled"
if grep -qiE 'Building wheel for (pillow|cbor2)|Running setup.py install for (pillow|cbor2)' "$work/install.log"; then
  fail "Pillow or cbor2 was built from source"
fi

# doctor, as the builder runs it (pi joined the tileclock group, so reads the 0640 config)
set +e
as_pi "tileclock doctor" >"$work/doctor.txt" 2>&1
doctor_code=$?
set -e
sed 's/^/  | /' "$work/doctor.txt"
for want in "ok    config: /etc/tileclock/config.toml" "ok    config mode: 0640" "ok    boot config: I2C:" \
  "ok    boot config: I2C speed:" "ok    boot config: UART:" "ok    serial console:" "clock id:"; do
  grep -qF "$want" "$work/doctor.txt" || fail "doctor did not say: $want"
done
# in a chroot there are no pins, no I2C bus and no UART: those fail, and nothing else does
unexpected=$(grep -E '^FAIL' "$work/doctor.txt" | grep -vE '^FAIL  (pin backend|panel [AB]|serial port):' || true)
[ -z "$unexpected" ] || fail "doctor found what it should not: $unexpected"
[ "$doctor_code" = 1 ] || fail "doctor exited $doctor_code, not 1 (no hardware here)"

# a scripted game, its records and every screen, against the same game on this machine
script=docs/examples/club-game.txt
"$HOST_TILECLOCK" sim --script "$SRC/$script" --frames "$root/tmp/host-frames" >"$root/tmp/host-records.txt"
as_pi "tileclock sim --script tileclock/$script --frames /tmp/pi-frames > /tmp/pi-records.txt" ||
  fail "the scripted game did not run"
cp "$SRC/systemd/pi-compare-sim.py" "$root/tmp/"
if ! inside /opt/tileclock/venv/bin/python /tmp/pi-compare-sim.py /tmp/host-records.txt \
  /tmp/pi-records.txt /tmp/host-frames /tmp/pi-frames | sed 's/^/  | /'; then
  fail "the scripted game differs from this machine's"
fi

versions=$(inside /opt/tileclock/venv/bin/python -c 'import importlib.metadata as m, PIL
print("Pillow", m.version("pillow"), "(Debian)," if PIL.__file__.startswith("/usr/lib/") else "(wheel),",
      "cbor2", m.version("cbor2") + ",", "gpiod", m.version("gpiod"))')
say "passed: install ${t_install} s; root $before_mb MB before, $after_mb MB after (+$((after_mb - before_mb)) MB); $versions"
