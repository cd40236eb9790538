"""One time for the hall: chrony's config for the director's laptop (the time server) and for
each clock (docs/hall.md, "One time for the hall"). `hall-setup` writes both; the installer writes
the clock's from its [hall] broker, from the same file (`broker_conf/chrony-clock.conf`).
"""

import re
import shutil
import subprocess

from .broker import SHIPPED

#: a host a clock can name its laptop by: a name or an IPv4/IPv6 address, nothing a config could
#: read as more than one word
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")
#: what `allow` takes: `all`, an address or a subnet
_ALLOW = re.compile(r"all|[0-9A-Fa-f.:]+(/\d{1,3})?")


def hall_conf(allow="all"):
    """chrony's config for the laptop: serve its own time to the clocks in `allow` (a subnet such
    as 192.168.4.0/24, or all)."""
    if not _ALLOW.fullmatch(allow):
        raise ValueError(f"--time-allow {allow!r}: all, an address, or a subnet (192.168.4.0/24)")
    return (SHIPPED / "chrony-hall.conf").read_text(encoding="utf-8").replace("@ALLOW@", allow)


def clock_conf(laptop):
    """chrony's config for a clock whose laptop (the hall's broker) is at `laptop`."""
    if not _HOST.fullmatch(laptop):
        raise ValueError(f"{laptop!r}: the laptop's address or name, as the clocks' [hall] broker says it")
    return (SHIPPED / "chrony-clock.conf").read_text(encoding="utf-8").replace("@LAPTOP@", laptop)


def chronyd_verdict(path):
    """What chronyd makes of the config at `path` (`chronyd -p`: it parses, prints, and exits):
    None if it takes it, else its complaint; ValueError when chronyd is not installed."""
    tool = shutil.which("chronyd") or shutil.which("chronyd", path="/usr/sbin:/sbin")
    if tool is None:
        raise ValueError("chronyd is not installed: sudo apt-get install chrony")
    answer = subprocess.run([tool, "-p", "-f", str(path)], capture_output=True, text=True, timeout=10)
    return None if answer.returncode == 0 else (answer.stderr.strip() or answer.stdout.strip())
