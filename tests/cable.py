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
    def __init__(self, folder, name):
        self.path = os.path.join(folder, name)
        self.master = None
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
        os.close(self.master)
        os.close(self._slave)
        self.master = None

    def write(self, data):
        os.write(self.master, data if isinstance(data, bytes) else data.encode("latin-1"))

    def read_lines(self, count, timeout=5.0):
        """Read until `count` complete lines came (or the timeout); returns them."""
        data = b""
        deadline = time.monotonic() + timeout
        while data.count(b"\n") < count and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                data += os.read(self.master, 65536)
        return data.decode("ascii", "replace").splitlines()

    def drain(self, timeout=0.2):
        """Everything that arrives until nothing has come for `timeout` seconds."""
        data = b""
        while select.select([self.master], [], [], timeout)[0]:
            data += os.read(self.master, 65536)
        return data.decode("ascii", "replace").splitlines()


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
