"""Serial cables for tests: real pseudo-terminals, with stable paths that can be pulled and put back.

`Plug` is one pty pair: the program under test opens `path` (a symlink to the
pty's device, as a USB adapter's stable name would be) with pyserial; the test
talks through the master side. `Cable` joins two plugs with a relay thread, so
two programs (a clock and a collector) can talk, and be cut apart and joined again.
"""

import os
import select
import threading
import time
import tty


class Plug:
    """One end of a serial line the test holds; what it reads is kept until asked for, line by line."""

    def __init__(self, folder, name):
        self.path = os.path.join(folder, name)
        self.master = None
        self._received = b""  # bytes read from the line and not yet handed out
        self.connect()

    def connect(self):
        master, slave = os.openpty()
        tty.setraw(slave)  # a serial device does not echo, even before the program opens it
        self._slave = slave  # kept open so the device stays while the program reopens it
        self.master = master
        link = self.path + ".new"
        os.symlink(os.ttyname(slave), link)
        os.replace(link, self.path)

    def pull(self):
        # udev removes a pulled adapter's stable name; left behind, it would point at a pty number
        # the kernel hands to the next openpty, perhaps another test's line
        os.unlink(self.path)
        os.close(self.master)
        os.close(self._slave)
        self.master = None
        # whole lines read before the pull were received; half a line never will be
        self._received = self._received[: self._received.rfind(b"\n") + 1]

    def write(self, data):
        os.write(self.master, data if isinstance(data, bytes) else data.encode("latin-1"))

    def _read(self, wait_s):
        if select.select([self.master], [], [], wait_s)[0]:
            self._received += os.read(self.master, 65536)
            return True
        return False

    def _take(self, count):
        lines = self._received.split(b"\n")[:count]
        self._received = self._received[sum(len(line) + 1 for line in lines) :]
        return [line.decode("ascii", "replace") for line in lines]

    def read_lines(self, count, timeout=5.0):
        """The next `count` lines; fails the test if they have not all come within `timeout` seconds.

        Lines that came beyond `count` are kept for the next call, never dropped.
        """
        deadline = time.monotonic() + timeout
        while self._received.count(b"\n") < count:
            left = deadline - time.monotonic()
            if left <= 0:
                got = self._received.decode("ascii", "replace")
                raise AssertionError(
                    f"{count} line(s) expected within {timeout} s on {self.path}; got {got!r}"
                )
            self._read(min(left, 0.05))
        return self._take(count)

    def drain(self, timeout=0.2):
        """Every line that comes until nothing has come for `timeout` seconds (and any kept before)."""
        while self._read(timeout):
            pass
        return self._take(self._received.count(b"\n"))


class Cable:
    """Two plugs and a relay thread copying bytes both ways between their masters."""

    def __init__(self, folder):
        self.a = Plug(folder, "clock-end")
        self.b = Plug(folder, "director-end")
        self._start()

    def _start(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()

    def _relay(self):
        ends = {self.a.master: self.b.master, self.b.master: self.a.master}
        while not self._stop.is_set():
            ready, _, _ = select.select(list(ends), [], [], 0.02)
            for fd in ready:
                try:
                    os.write(ends[fd], os.read(fd, 65536))
                except OSError:
                    pass

    def pull(self):
        self._stop.set()
        self._thread.join()
        self.a.pull()
        self.b.pull()

    def replug(self):
        self.a.connect()
        self.b.connect()
        self._start()
