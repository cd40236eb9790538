#!/usr/bin/env bash
# make image-check: boot the built card under qemu-system-aarch64 (TCG: no KVM needed), as
# -M raspi3b (the Pi 3 B's SoC, SD card, and the device tree from the card) and as -M virt, with
# a settings file put on its firmware partition, and read the result from the serial console:
# first boot done, the service up, doctor's report, a scripted game's records read back.
# The -M virt boot is a hall's clock (issue 42): its settings file is board 7's as `tileclock
# hall-setup --cards` writes it (clock id, password, command key, CA, time server), against a hall
# on this machine (hw/image/check_hall.py: hall-setup's mosquitto with TLS, a time server, the
# director's feed), reached over QEMU's user network at 10.0.2.2: the clock must connect with TLS,
# follow that time server (chronyd -p shows which makestep wins) and take a sealed round start.
#
#   hw/image/check.sh [IMAGE.img.xz] [MACHINE...]     # default: the newest in hw/image/out;
#                                                     # raspi3b, virt, virt+cut (a power cut first)
#
# Each boot works on its own copy of the card; the console is kept in hw/image/out/check-*.log.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
OUTDIR=$HERE/out
IMAGE=${1:-$(ls -t "$OUTDIR"/tileclock-*-arm64.img.xz 2>/dev/null | head -1)}
shift || true
MACHINES=("$@")
[ "${#MACHINES[@]}" -gt 0 ] || MACHINES=(raspi3b virt virt+cut)
TIMEOUT_S=${TILECLOCK_CHECK_TIMEOUT:-1800}
# the emulator's niceness: 10 beside others' work; TILECLOCK_CHECK_NICE=0 to time a boot fairly
NICE=${TILECLOCK_CHECK_NICE:-10}
BAR_READY_S=120   # first boot to the service ready under -M raspi3b (docs/build-guide.md)
BAR_XZ_MB=400

say() { printf '%s\n' "$*"; }
die() {
  printf 'make image-check: %s\n' "$*" >&2
  exit 1
}
[ -n "$IMAGE" ] && [ -e "$IMAGE" ] || die "no image: run make image first (or name one)"
export PATH=$PATH:/usr/sbin:/sbin
missing=()
command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
command -v mcopy >/dev/null || missing+=(mtools)
command -v sfdisk >/dev/null || missing+=(fdisk)
command -v fdtget >/dev/null || missing+=(device-tree-compiler)
[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || missing+=(mosquitto)
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "needs Debian's ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# the hall's side runs this checkout's tileclock (hall-setup, the director's feed): its venv
PY=${TILECLOCK_PYTHON:-$SRC/.venv/bin/python}
[ -x "$PY" ] || make -C "$SRC" .venv/.installed >/dev/null || die "no venv for the hall's side (make .venv/.installed)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tileclock-check.XXXXXX")
QEMU_PID=
HALL_PID=
cleanup() {
  [ -z "$QEMU_PID" ] || kill "$QEMU_PID" 2>/dev/null || true
  [ -z "$HALL_PID" ] || kill "$HALL_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "${IMAGE%.img}" != "$IMAGE" ]; then
  # an uncompressed card (while working on the image): no size bar to check
  xz_mb="(not compressed)"
  cp --sparse=always "$IMAGE" "$WORK/pristine.img"
else
  xz_mb=$(($(stat -c %s "$IMAGE") / 1000000))
  say "image: $IMAGE ($xz_mb MB compressed; the bar: under $BAR_XZ_MB MB)"
  [ "$xz_mb" -lt "$BAR_XZ_MB" ] || die "the compressed image is $xz_mb MB, over $BAR_XZ_MB MB"
  xz -dc "$IMAGE" | dd of="$WORK/pristine.img" bs=1M conv=sparse status=none
fi
# the firmware partition's offset, for mtools (image@@offset)
FAT_OFFSET=$(($(sfdisk -d "$WORK/pristine.img" | sed -n 's/.*1 : start= *\([0-9]*\),.*/\1/p') * 512))
fat() { printf '%s@@%s' "$WORK/card.img" "$FAT_OFFSET"; }

# The settings a director would write on the card: a hall clock on board 7
cat >"$WORK/settings.txt" <<'EOF'
board = 7
rules = nsa1997
panels = sh1106
hall = hall.invalid
hall_password = "check #1"
EOF

# A power cut in the middle of the first boot: QEMU killed (SIGKILL: what the guest had not
# written is lost) once the settings are applied and wiped from the card, before the first boot is
# done; then the same card is booted again and must pass the whole check.
cut_first_boot() {
  local machine=$1 log=$2 kept=$3 started now
  : >"$log"
  started=$(date +%s)
  nice -n "$NICE" qemu-system-aarch64 "${args[@]}" &
  QEMU_PID=$!
  until grep -aq "settings applied" "$log"; do
    kill -0 "$QEMU_PID" 2>/dev/null || die "-M $machine: QEMU stopped before the power cut (console: $log)"
    now=$(date +%s)
    [ $((now - started)) -lt "$TIMEOUT_S" ] || die "-M $machine: no settings applied after $TIMEOUT_S s (console: $log)"
    sleep 1
  done
  kill -KILL "$QEMU_PID"
  wait "$QEMU_PID" 2>/dev/null || true
  QEMU_PID=
  mv "$log" "$kept"
  grep -aq "first boot done" "$kept" && die "-M $machine: the cut came after the first boot was done"
  say "-M $machine: power cut $(($(date +%s) - started)) s after power-on, the settings applied, the first boot not done"
}

boot_one() {
  # NAME: raspi3b, virt, or virt+cut (a power cut during the first boot, then the whole check)
  local name=$1 machine=${1%+cut} log=$OUTDIR/check-${1/+/-}.log cmdline kver started ready="" result="" now line
  say "== -M $name"
  cp --sparse=always "$WORK/pristine.img" "$WORK/card.img"
  truncate -s 4G "$WORK/card.img" # an SD card's size is a power of 2 for QEMU; the data partition grows into it
  local settings=$WORK/settings.txt hall=""
  if [ "$name" = virt ]; then
    # a hall's clock: board 7's card as hall-setup writes it, the hall on this machine
    hall=$WORK/hall
    "$PY" "$HERE/check_hall.py" prepare "$hall" || die "-M virt: the hall's files could not be made"
    settings=$hall/settings.txt
  fi
  mcopy -o -i "$(fat)" "$settings" ::/tileclock-settings.txt
  kver=$(mdir -b -i "$(fat)" ::/ | sed -n 's|.*/vmlinuz-\(.*\)|\1|p' | head -1)
  [ -n "$kver" ] || die "no vmlinuz on the firmware partition"
  mcopy -o -i "$(fat)" "::/vmlinuz-$kver" "::/initrd.img-$kver" "::/cmdline.txt" "$WORK/"
  # the card's own command line, with a console on the first UART and the self-check asked for
  cmdline="$(tr -d '\n' <"$WORK/cmdline.txt") console=ttyAMA0,115200 tileclock.selfcheck"
  # -M virt has no Pi pins: the service runs with simulated buttons and panels there
  [ "$machine" = virt ] && cmdline+=" tileclock.simulate"
  local args=(-kernel "$WORK/vmlinuz-$kver" -initrd "$WORK/initrd.img-$kver" -append "$cmdline"
    -display none -monitor none -serial "file:$log" -no-reboot)
  if [ "$machine" = raspi3b ]; then
    mcopy -o -i "$(fat)" ::/bcm2837-rpi-3-b.dtb "$WORK/"
    # what the Pi's firmware adds to the tree before the kernel starts, and QEMU (no firmware) does
    # not: the board's revision (gpiozero reads it) and serial number (the clock id comes from it)
    fdtput -p -t x "$WORK/bcm2837-rpi-3-b.dtb" /system linux,revision a02082
    fdtput -t s "$WORK/bcm2837-rpi-3-b.dtb" / serial-number 00000000c0ffee25
    say "device tree: I2C-1 at $(fdtget -t i "$WORK/bcm2837-rpi-3-b.dtb" /soc/i2c@7e804000 clock-frequency) Hz"
    args+=(-M raspi3b -dtb "$WORK/bcm2837-rpi-3-b.dtb" -drive "file=$WORK/card.img,if=sd,format=raw"
      -serial "file:$OUTDIR/check-$machine-uart1.log")
  else
    args+=(-M virt -cpu cortex-a53 -smp 2 -m 1G)
    # the hall's boot on QEMU's user network (this machine is 10.0.2.2 there); the others on none
    if [ -n "$hall" ]; then args+=(-netdev user,id=hall -device virtio-net-device,netdev=hall); else args+=(-nic none); fi
    args+=(-drive "file=$WORK/card.img,if=none,format=raw,id=card" -device virtio-blk-device,drive=card)
  fi
  [ "$name" = "$machine" ] || cut_first_boot "$machine" "$log" "${log%.log}-first.log"
  : >"$log"
  started=$(date +%s)
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  local hall_rc="" hall_log=$OUTDIR/check-hall.log
  if [ -n "$hall" ]; then
    "$PY" "$HERE/check_hall.py" serve "$hall" --timeout "$TIMEOUT_S" >"$hall_log" 2>&1 &
    HALL_PID=$!
  fi
  nice -n "$NICE" qemu-system-aarch64 "${args[@]}" &
  QEMU_PID=$!
  while :; do
    now=$(date +%s)
    # the hall's side done (its verdict in its log): the guest is kept running until it is
    if [ -n "$HALL_PID" ] && ! kill -0 "$HALL_PID" 2>/dev/null; then
      wait "$HALL_PID" && hall_rc=0 || hall_rc=$?
      HALL_PID=
    fi
    if [ -n "$result" ]; then
      [ -z "$HALL_PID" ] && break
    fi
    # the console ends its lines with CR LF
    if [ -z "$ready" ] && grep -aq "TILECLOCK-CHECK service active" "$log"; then
      ready=$((now - started))
    fi
    line=$(tr -d '\r' <"$log" | grep -a -m1 -E "TILECLOCK-CHECK (pass|FAIL)$" || true)
    if [ -n "$line" ] && [ -z "$result" ]; then
      result=${line##*TILECLOCK-CHECK }
      # a failed self-check ends the boot; a passed one waits for the hall's verdict too
      [ -z "$HALL_PID" ] || [ "$result" != pass ] && break
    fi
    kill -0 "$QEMU_PID" 2>/dev/null || { result=${result:-qemu stopped}; break; }
    [ $((now - started)) -lt "$TIMEOUT_S" ] || { result=${result:-no verdict after $TIMEOUT_S s}; break; }
    sleep 2
  done
  kill "$QEMU_PID" 2>/dev/null || true
  wait "$QEMU_PID" 2>/dev/null || true
  QEMU_PID=
  if [ -n "$HALL_PID" ]; then
    kill "$HALL_PID" 2>/dev/null || true
    wait "$HALL_PID" 2>/dev/null || true
    HALL_PID=
  fi
  grep -a -E "TILECLOCK-CHECK|tileclock-(firstboot|grow)" "$log" | tr -d '\r' |
    sed 's/^.*\(TILECLOCK-CHECK\|tileclock-firstboot\|tileclock-grow\)/\1/'
  say "-M $name: $result; the self-check saw the service ready ${ready:-never} s after power-on (host clock; nice $NICE;" \
    "this machine's load average $load_before at power-on, $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
  if [ -n "$hall" ]; then
    grep -a '^HALL ' "$hall_log" || true
    say "-M $name: the hall's side: ${hall_rc:-not done}; the hall clock's boot took $(($(date +%s) - started)) s in all"
  fi
  [ "$result" = pass ] || die "-M $name: $result (console: $log)"
  if [ -n "$hall" ]; then
    [ "$hall_rc" = 0 ] || die "-M $name: the hall did not see the clock take its sealed round start (log: $hall_log)"
    tr -d '\r' <"$log" | grep -aq "TILECLOCK-CHECK time source: 10.0.2.2$" ||
      die "-M $name: the clock does not follow the hall's time server 10.0.2.2 (console: $log)"
  fi
  grep -aq "first boot done" "$log" || die "-M $name: the first boot did not finish"
  # the guest's own figure: its uptime when the service said READY=1 (the console line above comes
  # later, after the data partition has grown); the host's, when that line was seen
  guest=$(tr -d '\r' <"$log" | sed -n 's/.*TILECLOCK-CHECK service active.*ready at uptime \([0-9]*\) s.*/\1/p' | head -1)
  [ -n "$guest" ] || die "-M $name: the self-check did not say when the service was ready"
  say "-M $name: service ready at the guest's uptime $guest s"
  grep -aq "TILECLOCK-CHECK   no problems found" "$log" || say "-M $name: doctor found problems (above)"
  # the scripted game as played: B starts, A's and B's moves, then STOP held ends it
  grep -aq "TILECLOCK-CHECK   1,[0-9a-f]*,1,naspa,stop_hold," "$log" ||
    die "-M $name: the scripted game's record does not show it ended by holding STOP (console: $log)"
  if [ "$machine" = raspi3b ]; then
    # the real service's records on the Pi's record UART (the mini UART, QEMU's second serial port)
    grep -aq '"ev":"boot".*"board":"7"' "$OUTDIR/check-$machine-uart1.log" ||
      die "-M raspi3b: no boot record for board 7 on the record UART ($OUTDIR/check-$machine-uart1.log)"
    say "-M raspi3b: the service's records on the record UART: $(grep -ao '"ev":"[a-z_]*"' \
      "$OUTDIR/check-$machine-uart1.log" | sort | uniq -c | tr -s ' \n' ' ')"
  fi
  # a figure, said loudly, not a failure: it measures this machine's speed as much as the image
  if [ "$machine" = raspi3b ] && [ "$guest" -ge "$BAR_READY_S" ]; then
    say "-M raspi3b: BAR NOT MET: service ready at uptime $guest s, the bar is $BAR_READY_S s"
  fi
  READY_S[$name]=$guest
}

declare -A READY_S
for machine in "${MACHINES[@]}"; do
  boot_one "$machine"
done
summary="image-check passed: $xz_mb"
[ "${IMAGE%.img}" != "$IMAGE" ] || summary+=" MB compressed"
for machine in "${MACHINES[@]}"; do summary+=", -M $machine ready at uptime ${READY_S[$machine]} s"; done
say "$summary"
