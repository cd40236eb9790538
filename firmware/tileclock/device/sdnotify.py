"""systemd's notify protocol, in the dozen lines it takes: READY, WATCHDOG, STATUS, STOPPING.

With `Type=notify` and `WatchdogSec=`, systemd passes `NOTIFY_SOCKET` and
`WATCHDOG_USEC`; the service sends datagrams of `KEY=value` lines to that
socket. Outside systemd both are absent and every call does nothing.
"""

import logging
import os
import socket

log = logging.getLogger(__name__)


class Notifier:
    """Talks to systemd if it is listening; `watchdog_interval_ns` is how often to ping (half its limit)."""

    def __init__(self, environ=os.environ):
        address = environ.get("NOTIFY_SOCKET")
        if address and address.startswith("@"):
            address = "\0" + address[1:]  # an abstract socket
        self.address = address
        usec = environ.get("WATCHDOG_USEC")
        pid = environ.get("WATCHDOG_PID")
        wanted = usec and usec.isdigit() and (not pid or pid == str(os.getpid()))
        self.watchdog_interval_ns = int(usec) * 1000 // 2 if wanted else None

    def notify(self, *lines):
        """Send `KEY=value` lines; False if systemd is not there or did not take them."""
        if not self.address:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto("\n".join(lines).encode(), self.address)
            return True
        except OSError as error:
            log.warning("sd_notify to %r failed: %s", self.address, error)
            return False

    def ready(self, status="keeping time"):
        return self.notify("READY=1", f"STATUS={status}")

    def watchdog(self):
        return self.notify("WATCHDOG=1")

    def stopping(self):
        return self.notify("STOPPING=1")
