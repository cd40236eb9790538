"""What the kernel says about a process: every thread's wake-ups and CPU, its memory, a folder's filesystem."""

import os

from ..device.journal import writeback

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def threads(pid):
    """{thread id: (voluntary context switches, involuntary ones, CPU seconds)} for every thread of `pid`.

    A voluntary switch is the thread going to sleep (waiting for a lock, a descriptor, a timeout,
    the disk); each one ends in a wake-up, so their count is the thread's wake-ups.
    """
    found = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as file:
                status = dict(line.split(":", 1) for line in file if ":" in line)
            with open(f"/proc/{pid}/task/{tid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended meanwhile
        cpu_s = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime and stime
        found[int(tid)] = (
            int(status["voluntary_ctxt_switches"]),
            int(status["nonvoluntary_ctxt_switches"]),
            cpu_s,
        )
    return found


def difference(before, after):
    """Per thread, what happened between two `threads()` snapshots (a thread born meanwhile from zero)."""
    zero = (0, 0, 0.0)
    return {
        tid: tuple(now - then for now, then in zip(counts, before.get(tid, zero), strict=True))
        for tid, counts in after.items()
    }


def cpu_seconds(pid):
    """The CPU time (user and system) `pid` has used, its ended threads' too; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def peak_rss_mb(pid):
    """The process's peak resident memory (VmHWM), in MiB."""
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def filesystem(path, mountinfo="/proc/self/mountinfo"):
    """(filesystem type, source, mount point) of the filesystem that holds `path`."""
    return writeback.filesystem(path, mountinfo)[:3]


#: Filesystems held in memory, where fsync costs nothing: a journal there measures nothing.
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")
