"""What wakes the loop from other threads: its inbox, and a waker for each descriptor registered with it.

The pin backend's thread posts edges into the `Inbox`; paho's thread and a
script's post wake-ups and command lines there. A part with a file descriptor
(the serial link's port) is registered with the loop (`Reactor.register_fd`),
which runs an `FdWaker` on it while it runs: a thread that blocks on the
descriptor and a pipe, with no timeout, and wakes the loop when data comes.
"""

import os
import queue
import select
import threading
import time


class Inbox:
    """What other threads hand the loop: raw button edges, bare wake-ups and command lines."""

    def __init__(self):
        #: (t_ns, button, down) of each edge; button None: only a wake-up
        self.inputs = queue.SimpleQueue()
        self._commands = queue.SimpleQueue()  # command lines handed over by other threads

    def post_edge(self, button, down, t_ns):
        """A raw button edge, from any thread."""
        self.inputs.put((t_ns, button, down))

    def wake(self, t_ns):
        """Wake the loop (from any thread) without an edge."""
        self.inputs.put((t_ns, None, None))

    def post_command(self, line, t_ns):
        """A director's command line (bytes) from any thread, answered on the next wake."""
        self._commands.put(line)
        self.wake(t_ns)

    def take_commands(self):
        """The command lines posted since, oldest first."""
        lines = []
        while not self._commands.empty():
            lines.append(self._commands.get_nowait())
        return lines


def _identity(fd):
    """The open file behind descriptor `fd` (its number, device and inode), or None if it is not
    open: a port reopened on the same number is another file, which a number alone cannot tell."""
    if fd is None:
        return None
    try:
        found = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return fd, found.st_dev, found.st_ino


class FdWaker:
    """A thread that wakes the loop when `part`'s descriptor (`part.fileno()`, None while it is
    closed) has data, and costs nothing otherwise.

    It blocks on the descriptor and on a pipe (poll, so any descriptor number), with no timeout. Once it has woken the loop it leaves
    the descriptor alone (unread data would wake it again at once) until the loop, having read,
    calls `loop_woke()`; that also tells it when the part was reopened (another file, even on the
    same descriptor number). `stop()` ends it through the pipe.
    """

    def __init__(self, part, wake):
        self.part = part
        self.wake = wake
        self.watched = None  # what it waits on (`_identity`), or None while it waits for the loop
        self._stopping = False
        self._read, self._write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="fd-waker", daemon=True)
        self._thread.start()

    def loop_woke(self):
        """The loop has done a wake (and read what was waiting): watch the descriptor again if need be."""
        if self.watched != _identity(self.part.fileno()):
            self._poke()

    def stop(self):
        """End the thread, and let go of its pipe."""
        self._stopping = True
        self._poke()
        self._thread.join(timeout=5)
        os.close(self._read)
        os.close(self._write)

    def _poke(self):
        try:
            os.write(self._write, b"!")
        except OSError:
            pass  # stopped already

    def _run(self):
        watch = True
        while not self._stopping:
            fd = self.part.fileno() if watch else None
            self.watched = _identity(fd)
            try:
                ready = _wait([self._read] if fd is None else [self._read, fd])
            except ValueError:  # a descriptor poll cannot take (negative): wait for the loop's word
                self.watched = None
                watch = False
                continue
            if ready.get(fd, 0) & select.POLLNVAL:  # the loop closed the descriptor under it
                self.watched = None  # first: a `loop_woke` from now on pokes it
                # the loop may have opened it again already (perhaps on the same number) and said
                # so before this: watch the new one; else wait for the loop's word
                watch = _identity(self.part.fileno()) is not None
                continue
            if self._read in ready:
                os.read(self._read, 512)
                watch = True
            elif fd in ready:  # data, or a hang-up or error the loop's read will meet
                self.watched = None  # first, so that the loop's `loop_woke` after this wake pokes it
                watch = False
                self.wake(time.monotonic_ns())


def _wait(fds):
    """Block with no timeout until one of `fds` is readable (or hung up, in error, not open): a
    dict of descriptor -> poll events. poll, not select: select cannot take a descriptor of 1024
    or more, which a service with many files open (or a raised RLIMIT_NOFILE) hands out."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return dict(poller.poll())
