#!/usr/bin/env bash
# Install tileclock on Raspberry Pi OS (Bookworm or later) and start it at every power-on.
#
#   sudo systemd/install.sh               # from a checkout of tileclock, on the Pi
#   systemd/install.sh --dry-run DIR      # write every file under DIR, list the commands, run none
#
# It installs the package into its own virtual environment (/opt/tileclock/venv), writes
# /etc/tileclock/config.toml if there is none, enables I2C (at 400 kHz) and the UART, creates the
# service user, installs the systemd unit and starts it. Run it again to upgrade: the config stays.
set -euo pipefail

ROOT=""
DRY=0
if [ "${1:-}" = "--dry-run" ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 [--dry-run DIR]" >&2; exit 2; }
  DRY=1
  ROOT=$(realpath -m "$2")
  mkdir -p "$ROOT"
elif [ -n "${1:-}" ]; then
  echo "usage: $0 [--dry-run DIR]" >&2
  exit 2
fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=/opt/tileclock
USER_NAME=tileclock

say() { printf '%s\n' "$*"; }
# Run a command, or in a dry run list it in DIR/commands.txt.
run() {
  if [ "$DRY" = 1 ]; then printf '%s\n' "$*" >> "$ROOT/commands.txt"; else "$@"; fi
}

if [ "$DRY" = 0 ] && [ "$(id -u)" != 0 ]; then
  echo "run it as root: sudo $0" >&2
  exit 1
fi
[ "$DRY" = 1 ] && : > "$ROOT/commands.txt"

say "1/6 packages"
run apt-get update
# lgpio from Pi OS (built for its kernel); a compiler for RPi.GPIO, which older images use
run apt-get install -y python3-venv python3-dev gcc python3-lgpio i2c-tools

say "2/6 the service user, with the groups for GPIO, I2C, SPI and the serial port"
if ! id "$USER_NAME" >/dev/null 2>&1 || [ "$DRY" = 1 ]; then
  run useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin "$USER_NAME"
fi
run usermod -a -G gpio,i2c,spi,dialout "$USER_NAME"
# the group reads the journal (the service writes it 0640 in a 0750 directory): the login that ran
# sudo joins it, so `tileclock export` works without sudo from its next login
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
  run usermod -a -G "$USER_NAME" "$SUDO_USER"
  say "    $SUDO_USER joins the group $USER_NAME (reads finished games) from the next login"
fi

say "3/6 the package, in $PREFIX/venv"
mkdir -p "$ROOT$PREFIX"
run rm -rf "$PREFIX/src"
run cp -r "$SRC" "$PREFIX/src"
# system site packages: Pi OS's own lgpio build matches its kernel
run python3 -m venv --system-site-packages "$PREFIX/venv"
run "$PREFIX/venv/bin/pip" install --upgrade "$PREFIX/src"
run "$PREFIX/venv/bin/python" -m compileall -q "$PREFIX/venv"
# `tileclock` on everyone's PATH
mkdir -p "$ROOT/usr/local/bin"
ln -sfn "$PREFIX/venv/bin/tileclock" "$ROOT/usr/local/bin/tileclock"

say "4/6 the config, if there is none"
mkdir -p "$ROOT/etc/tileclock"
if [ -e "$ROOT/etc/tileclock/config.toml" ]; then
  say "    /etc/tileclock/config.toml kept as it is"
else
  install -m 0644 "$SRC/systemd/config.toml" "$ROOT/etc/tileclock/config.toml"
fi

say "5/6 I2C at 400 kHz and the UART, in the boot config"
# Bookworm keeps the boot config in /boot/firmware; older images in /boot
BOOT=/boot/firmware
if [ ! -d "$ROOT$BOOT" ] && [ -e "$ROOT/boot/config.txt" ]; then BOOT=/boot; fi
mkdir -p "$ROOT$BOOT"
touch "$ROOT$BOOT/config.txt"
for line in dtparam=i2c_arm=on dtparam=i2c_arm_baudrate=400000 enable_uart=1; do
  key=${line%%=*}
  [ "$key" = dtparam ] && key=${line%=*}
  if grep -q "^$key=" "$ROOT$BOOT/config.txt"; then
    sed -i "s|^$key=.*|$line|" "$ROOT$BOOT/config.txt"
  else
    printf '%s\n' "$line" >> "$ROOT$BOOT/config.txt"
  fi
done
# the UART carries records, not a login console
if [ -e "$ROOT$BOOT/cmdline.txt" ]; then
  sed -i 's/console=serial0,[0-9]* //; s/console=ttyAMA0,[0-9]* //' "$ROOT$BOOT/cmdline.txt"
fi
if [ "$DRY" = 0 ]; then
  grep -q '^i2c-dev' /etc/modules 2>/dev/null || echo i2c-dev >> /etc/modules
else
  echo "append i2c-dev to /etc/modules" >> "$ROOT/commands.txt"
fi

say "6/6 the service"
mkdir -p "$ROOT/etc/systemd/system"
install -m 0644 "$SRC/systemd/tileclock.service" "$ROOT/etc/systemd/system/tileclock.service"
# network sockets only for a clock with a [hall] section (the uplink to the director's broker)
if grep -q '^\[hall\]' "$ROOT/etc/tileclock/config.toml"; then
  mkdir -p "$ROOT/etc/systemd/system/tileclock.service.d"
  install -m 0644 "$SRC/systemd/hall.conf" "$ROOT/etc/systemd/system/tileclock.service.d/hall.conf"
  say "    [hall] configured: the service may open network sockets"
else
  rm -f "$ROOT/etc/systemd/system/tileclock.service.d/hall.conf"
fi
run systemctl daemon-reload
run systemctl enable --now tileclock.service

say "done. Check it with: tileclock doctor"
say "A changed boot config takes effect after a reboot."
