"""Who holds a GPIO line: the consumer label its holder gave the kernel, and the processes with a
line request open. `tileclock doctor` names them when the buttons' lines are taken."""

import os

from .gpiod_pins import find_chip

#: What /proc/PID/fd/N links to for a line request (uAPI v2; v1's handles and events)
LINE_REQUEST_LINKS = ("anon_inode:gpio-line", "anon_inode:gpio-linehandle", "anon_inode:gpio-event")


def line_holders(offsets, chip_path=None, gpiod=None, proc="/proc"):
    """{offset: (consumer, [(pid, name), ...])} for each of `offsets` some request holds: the consumer
    label its holder gave the kernel, and the other processes with a line request open (the kernel
    does not say which holds which line: those named like the label come first)."""
    if gpiod is None:
        import gpiod
    with gpiod.Chip(chip_path or find_chip(gpiod)) as chip:
        infos = {offset: chip.get_line_info(offset) for offset in offsets}
    processes = requesting_processes(proc)
    held = {}
    for offset, info in infos.items():
        if info.used:
            consumer = info.consumer or "?"
            held[offset] = (consumer, sorted(processes, key=lambda process: process[1] != consumer))
    return held


def requesting_processes(proc="/proc"):
    """[(pid, name)] of the processes (not this one) with a GPIO line request open, from /proc/PID/fd."""
    found = []
    for pid in filter(str.isdigit, os.listdir(proc)):
        if int(pid) == os.getpid():
            continue
        try:
            links = [os.readlink(f"{proc}/{pid}/fd/{fd}") for fd in os.listdir(f"{proc}/{pid}/fd")]
            if any(link in LINE_REQUEST_LINKS for link in links):
                with open(f"{proc}/{pid}/comm") as comm:
                    found.append((int(pid), comm.read().strip()))
        except OSError:  # gone meanwhile, or not ours to look into
            continue
    return found
