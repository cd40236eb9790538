"""A simulated serial cable: two pseudo-terminals joined, so a simulated clock and `collect` can talk.

A pty has one end with a device path (the program opens it with pyserial, as
it would a USB adapter) and one without (the master, a file descriptor). Two
of them, their masters joined by a relay thread, make a null-modem cable
between two device paths: `tileclock run --simulate --line PATH` puts the
clock on one and leaves the other at PATH for `tileclock collect PATH`. The
relay blocks on both masters and a pipe with no timeout: it wakes only for
bytes on the line, or to stop.
"""

import os
import select
import tempfile
import threading
import tty


class Cable:
    """Two joined ptys: `clock_end` (a device path) and the director's end, symlinked at `path`."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        if os.path.lexists(self.path) and not os.path.islink(self.path):
            raise FileExistsError(f"{self.path} exists and is not a link this cable left: choose another")
        self._masters, self._slaves = [], []
        for _ in range(2):
            master, slave = os.openpty()
            tty.setraw(slave)  # a serial line does not echo or translate
            os.set_blocking(master, False)  # an end nobody reads must not hold up the other
            self._masters.append(master)
            self._slaves.append(slave)  # held open, so each end's device stays while programs reopen it
        self.clock_end = os.ttyname(self._slaves[0])
        link = tempfile.mktemp(prefix=".tileclock-line-", dir=os.path.dirname(self.path))
        os.symlink(os.ttyname(self._slaves[1]), link)
        os.replace(link, self.path)
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._relay, name="cable", daemon=True)
        self._thread.start()

    def _relay(self):
        across = {self._masters[0]: self._masters[1], self._masters[1]: self._masters[0]}
        while True:
            ready = select.select([*across, self._wake_read], [], [])[0]
            if self._wake_read in ready:
                return
            for fd in ready:
                try:
                    os.write(across[fd], os.read(fd, 65536))
                except (
                    OSError
                ):  # nobody on the other end yet: bytes on a cable with no one listening are lost
                    pass

    def close(self):
        """Stop relaying, close both ptys and remove the link at `path`."""
        os.write(self._wake_write, b"!")
        self._thread.join(timeout=5)
        for fd in (*self._masters, *self._slaves, self._wake_read, self._wake_write):
            os.close(fd)
        if os.path.islink(self.path):
            os.unlink(self.path)
