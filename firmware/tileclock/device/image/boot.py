"""The image's one program at boot (hw/image/root/usr/lib/tileclock-image/firstboot): the card's
settings file applied (`settings.py`), then doctor's verdict on the panels (`verdict.py`), in one
Python: an interpreter and tileclock's imports cost a first boot seconds on a Pi (more under
emulation), so the verdict is not a second program.

    python -m tileclock.device.image.boot [--hostname] [--verdict SECONDS]
    python -m tileclock.device.image.boot --only-verdict SECONDS   # the image check's self-check
"""

import argparse
import grp
import os
import socket
import sys

from .. import identity
from . import verdict
from .settings import (
    REJECTED_NAME,
    SETTINGS_NAME,
    SettingsError,
    apply_settings,
    config_toml,
    kept_clock_id,
    note_rejection,
    remove,
    write_whole,
)
from .settings_lines import Settings


def arguments(argv):
    """The boot's options, parsed."""
    parser = argparse.ArgumentParser(prog="python -m tileclock.device.image.boot")
    parser.add_argument("--boot", default="/boot/firmware", help="the firmware partition")
    parser.add_argument("--etc", default="/etc/tileclock", help="the clock's config folder")
    parser.add_argument("--state-dir", default="/var/lib/tileclock", help="the clock's journal")
    parser.add_argument("--wifi", default="/data/wifi/wpa_supplicant.conf")
    parser.add_argument("--ssh", default="/data/ssh/authorized_keys")
    parser.add_argument("--template", default="/usr/lib/tileclock-image/config.toml")
    parser.add_argument("--group", default="tileclock", help="the group that may read the config")
    parser.add_argument("--hostname", action="store_true", help="set the hostname to tileclock-ID")
    parser.add_argument("--verdict", type=int, metavar="SECONDS", help="then doctor's verdict on the panels")
    parser.add_argument(
        "--only-verdict", type=int, metavar="SECONDS", help="doctor's verdict alone, no settings read"
    )
    return parser.parse_args(argv)


def apply_card_settings(args, config_path):
    """The settings file applied if the firmware partition has one; on a board with no serial
    number, the clock id made at first boot kept. 0, or 2 when the file is refused (the reason
    is then noted on the firmware partition too)."""
    settings_path = os.path.join(args.boot, SETTINGS_NAME)
    try:
        gid = grp.getgrnam(args.group).gr_gid
    except KeyError:
        gid = None
    # a board without a serial number (an emulator) would get a new id with each boot's machine id
    clock_id = kept_clock_id(config_path) or (
        None if identity.board_serial() else identity.hardware_clock_id()
    )
    status = 0
    if os.path.exists(settings_path):
        with open(args.template, encoding="utf-8") as file:
            template = file.read()
        try:
            print(apply_settings(settings_path, args.etc, args.wifi, args.ssh, template, clock_id, gid))
        except SettingsError as error:
            print(f"{settings_path} not applied, left for the director to mend: {error}", file=sys.stderr)
            note_rejection(args.boot, error)
            status = 2
    elif clock_id and not kept_clock_id(config_path) and os.path.exists(config_path):
        with open(config_path, encoding="utf-8") as file:
            current = file.read()
        write_whole(config_path, config_toml(Settings(), current, clock_id), 0o640, gid)
        print(f"no serial number on this board: clock id {clock_id} kept in {config_path}")
    else:
        print(f"no {SETTINGS_NAME} on {args.boot}: the settings stay as they are")
    if status == 0:
        remove(os.path.join(args.boot, REJECTED_NAME))  # an old refusal, mended or taken away
    return status


def main(argv=None):
    """At every boot of the image: the settings file applied; with --hostname, the machine named
    after the clock id; with --verdict, doctor's verdict shown on the panels after. Exit 0, or 2
    when the settings file is refused."""
    args = arguments(argv)
    config_path = os.path.join(args.etc, "config.toml")
    if args.only_verdict is not None:
        verdict.show_verdict(config_path, args.state_dir, args.boot, args.only_verdict)
        return 0
    status = apply_card_settings(args, config_path)
    if args.hostname:
        clock_id = kept_clock_id(config_path) or identity.hardware_clock_id()
        if clock_id:
            socket.sethostname(f"tileclock-{clock_id}")
        print(f"clock id {clock_id}")
    if args.verdict is not None:
        sys.stdout.flush()
        try:
            verdict.show_verdict(config_path, args.state_dir, args.boot, args.verdict)
        except Exception as error:  # the settings are applied whatever doctor makes of the card
            print(f"doctor's verdict could not be shown: {type(error).__name__}: {error}", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
