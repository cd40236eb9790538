#!/usr/bin/env bash
# Install tileclock on Raspberry Pi OS (Bookworm or later; 64- or 32-bit) or Debian on a Pi, and start it
# at every power-on. Into an image (a chroot, systemd not running) it enables the service for the first boot.
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
# Debian's architecture name: armhf and armel are 32-bit Pi OS (armv7l, armv6l)
ARCH=$(dpkg --print-architecture 2>/dev/null || uname -m)
packages=(python3 python3-venv i2c-tools)
case "$ARCH" in
  armhf | armel)
    # no wheels there: Debian's Pillow and cbor2 (the venv sees them), never a C or Rust build of
    # either; a compiler only for the gpiod bindings, which are small C
    packages+=(python3-pil python3-cbor2 python3-dev gcc)
    ;;
esac
# Pi OS's lgpio (built for its kernel), for buttons.backend = "lgpio"; plain Debian has none, and
# gpiod, the default wherever /dev/gpiochip* exists, needs it not
if [ "$DRY" = 1 ] || apt-cache show python3-lgpio >/dev/null 2>&1; then
  packages+=(python3-lgpio)
else
  say "    no python3-lgpio in this archive (Pi OS has it): the gpiod backend does without"
fi
# a blind player's speech (docs/director-guide.md#speech): espeak-ng and aplay, about 14 MB with
# every language's voice data; always installed, so a director can turn speech on at any table
packages+=(espeak-ng alsa-utils)
run env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"

say "2/6 the service user, with the groups for GPIO, I2C, SPI, the serial port and audio"
if ! id "$USER_NAME" >/dev/null 2>&1 || [ "$DRY" = 1 ]; then
  run useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin "$USER_NAME"
fi
# Pi OS has these groups and the device rules that use them; plain Debian has neither
missing=0
for group in gpio i2c spi dialout; do
  if [ "$DRY" = 1 ] || ! getent group "$group" >/dev/null; then
    run groupadd --force --system "$group"
    missing=1
  fi
done
if [ "$missing" = 1 ]; then
  # Pi OS's own rules (99-com.rules) do this; elsewhere the devices would stay root's alone
  mkdir -p "$ROOT/etc/udev/rules.d"
  install -m 0644 "$SRC/systemd/60-tileclock-devices.rules" "$ROOT/etc/udev/rules.d/60-tileclock-devices.rules"
fi
run usermod -a -G gpio,i2c,spi,dialout,audio "$USER_NAME"  # audio: the earphone (speech)
# the group reads the journal (the service writes it 0640 in a 0750 directory) and the config: the
# login that ran sudo joins it, so `tileclock export` and `tileclock doctor` work without sudo from
# its next login
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
# --only-binary: Pillow and cbor2 come as wheels or from Debian (above), never built here (a C or
# Rust build on a Pi takes an hour or fails)
run "$PREFIX/venv/bin/pip" install --upgrade --only-binary pillow,cbor2 "$PREFIX/src"
run "$PREFIX/venv/bin/python" -m compileall -q "$PREFIX/venv"
# `tileclock` on everyone's PATH
mkdir -p "$ROOT/usr/local/bin"
ln -sfn "$PREFIX/venv/bin/tileclock" "$ROOT/usr/local/bin/tileclock"

say "4/6 the config, if there is none"
mkdir -p "$ROOT/etc/tileclock"
if [ -e "$ROOT/etc/tileclock/config.toml" ]; then
  say "    /etc/tileclock/config.toml kept as it is"
else
  install -m 0640 "$SRC/systemd/config.toml" "$ROOT/etc/tileclock/config.toml"
  # a Pi 5's record line is UART0 (/dev/ttyAMA0); its /dev/serial0 is the debug connector
  if grep -qs '^Raspberry Pi 5' "$ROOT/proc/device-tree/model"; then
    sed -i 's|^port = "/dev/serial0"|port = "/dev/ttyAMA0"|' "$ROOT/etc/tileclock/config.toml"
    say "    a Pi 5: the record line is /dev/ttyAMA0 (GPIO 14/15)"
  fi
fi
# it may hold the hall's password: root writes it, the service's group reads it, nobody else
run chown root:"$USER_NAME" /etc/tileclock/config.toml
run chmod 0640 /etc/tileclock/config.toml

say "5/6 I2C at 400 kHz and the UART, in the boot config"
# Bookworm keeps the boot config in /boot/firmware; older images in /boot
BOOT=/boot/firmware
if [ ! -d "$ROOT$BOOT" ] && [ -e "$ROOT/boot/config.txt" ]; then BOOT=/boot; fi
mkdir -p "$ROOT$BOOT"
touch "$ROOT$BOOT/config.txt"
CONFIG_TXT="$ROOT$BOOT/config.txt"
# a line appended after a [pi4] or [cm5] section would apply to that board alone
last_section=$(grep -E '^\[[^]]*\]' "$CONFIG_TXT" | tail -n 1 || true)
appended=0
# enable_uart=1 also fixes the VPU core clock on a Pi 3 and Zero 2 W: the I2C clock is divided from
# it, and where it scales the panels' bus runs slower than set (docs/build-guide.md)
for line in dtparam=i2c_arm=on dtparam=i2c_arm_baudrate=400000 enable_uart=1; do
  key=${line%%=*}
  [ "$key" = dtparam ] && key=${line%=*}
  if grep -q "^$key=" "$CONFIG_TXT"; then
    sed -i "s|^$key=.*|$line|" "$CONFIG_TXT"
  else
    if [ "$appended" = 0 ] && [ -n "$last_section" ] && [ "$last_section" != "[all]" ]; then
      printf '[all]\n' >> "$CONFIG_TXT"
    fi
    appended=1
    printf '%s\n' "$line" >> "$CONFIG_TXT"
  fi
done
# a Pi 5's GPIO 14/15 is UART0, off unless asked for (its /dev/serial0 is the debug connector)
if ! grep -q '^dtparam=uart0=on' "$CONFIG_TXT"; then
  printf '[pi5]\ndtparam=uart0=on\n[all]\n' >> "$CONFIG_TXT"
fi
# the UART carries records, not a login console
if [ -e "$ROOT$BOOT/cmdline.txt" ]; then
  read -r -a words < "$ROOT$BOOT/cmdline.txt" || true
  kept=()
  for word in "${words[@]}"; do
    case "$word" in
      console=serial0* | console=ttyAMA0* | console=ttyS0* | console=ttyAMA10*) ;;
      *) kept+=("$word") ;;
    esac
  done
  printf '%s\n' "${kept[*]}" > "$ROOT$BOOT/cmdline.txt"
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
  # TLS to the broker (docs/hall.md, "Encrypted on the Wi-Fi"): the hall's CA, from
  # TILECLOCK_HALL_CA=FILE (hall-setup's tileclock-ca.pem), and [hall] tls_ca naming it
  if [ -n "${TILECLOCK_HALL_CA:-}" ]; then
    grep -q -- '-----BEGIN CERTIFICATE-----' "$TILECLOCK_HALL_CA" \
      || { echo "install.sh: TILECLOCK_HALL_CA=$TILECLOCK_HALL_CA is not a PEM certificate" >&2; exit 1; }
    install -m 0644 "$TILECLOCK_HALL_CA" "$ROOT/etc/tileclock/hall-ca.pem"
    if ! sed -n '/^\[hall\]/,/^\[/p' "$ROOT/etc/tileclock/config.toml" | grep -q '^[[:space:]]*tls_ca[[:space:]]*='; then
      sed -i 's|^\[hall\]$|[hall]\ntls_ca = "/etc/tileclock/hall-ca.pem"|' "$ROOT/etc/tileclock/config.toml"
    fi
    say "    the hall's CA in /etc/tileclock/hall-ca.pem: TLS to the broker (port 8883 unless [hall] sets one)"
  elif ! sed -n '/^\[hall\]/,/^\[/p' "$ROOT/etc/tileclock/config.toml" | grep -q '^[[:space:]]*tls_ca[[:space:]]*='; then
    say "    NO TLS: [hall] has no tls_ca, so this clock's password and commands travel in the clear"
    say "    (run again with TILECLOCK_HALL_CA=tileclock-ca.pem, from hall-setup)"
  fi
  # the wall clock follows the director's laptop, the hall's broker (docs/hall.md, "One time for
  # the hall"): Debian's chrony, its config from the same file hall-setup writes
  laptop=$(sed -n '/^\[hall\]/,/^\[/s/^[[:space:]]*broker[[:space:]]*=[[:space:]]*"\([A-Za-z0-9.:-]*\)".*/\1/p' \
    "$ROOT/etc/tileclock/config.toml" | head -n 1)
  if [ -n "$laptop" ]; then
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y chrony
    mkdir -p "$ROOT/etc/chrony/conf.d"
    sed "s/@LAPTOP@/$laptop/" "$SRC/firmware/tileclock/director/hall/broker_conf/chrony-clock.conf" \
      > "$ROOT/etc/chrony/conf.d/tileclock.conf"
    say "    the wall clock follows $laptop (chrony: /etc/chrony/conf.d/tileclock.conf)"
    if [ "$DRY" = 1 ] || [ -d /run/systemd/system ]; then run systemctl restart chrony; fi
  fi
else
  rm -f "$ROOT/etc/systemd/system/tileclock.service.d/hall.conf" "$ROOT/etc/chrony/conf.d/tileclock.conf"
fi
if [ "$DRY" = 1 ] || [ -d /run/systemd/system ]; then
  run systemctl daemon-reload
  run systemctl enable --now tileclock.service
else
  # installing into an image (a chroot): enabled for its first boot, as `systemctl enable` does
  mkdir -p /etc/systemd/system/multi-user.target.wants
  ln -sfn /etc/systemd/system/tileclock.service /etc/systemd/system/multi-user.target.wants/tileclock.service
  say "    systemd is not running here (an image?): the service is enabled and starts at its first boot"
fi

say "done. Check it with: tileclock doctor"
say "A changed boot config takes effect after a reboot."
