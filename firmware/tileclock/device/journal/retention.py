"""How long the journal keeps finished games, and which to prune first.

A game is pruned whole (its segment), oldest first. A game the director
holds (acknowledged on the line, or exported) goes once it is older than
`keep_days` or the journal is larger than `keep_mb`. A game the director does
not hold yet is pruned only to stay under `keep_mb` (or when the card is full),
and each such game is reported in a `fault` record.
"""

import os
import time
from dataclasses import dataclass

from ...wire import segments as files

MB = 1024 * 1024
DAY_S = 24 * 3600


@dataclass(frozen=True)
class Retention:
    """What the journal keeps. The defaults suit a 16 GB card: a game with checkpoints is about
    100 KB, so 1,024 MB holds some ten thousand games (years of club nights), and the card keeps
    well over half its space for the system and for wear levelling."""

    #: finished games the director holds are kept this many days
    keep_days: int = 365
    #: the journal is kept under this many megabytes, oldest games first
    keep_mb: int = 1024


@dataclass(frozen=True)
class SegmentInfo:
    """One finished game's segment: its seqs, its size and when it was last written (wall time)."""

    first: int
    last: int  # the seq before the next segment's first: every seq it can hold
    size: int
    mtime: float


def choose(segments, retention, held_through, now_s, need_bytes=0):
    """The segments to prune, each with whether the director did not hold it yet.

    `segments` are the finished ones, oldest first (never the one being written); `held_through`
    is the highest seq the director holds (or None); `need_bytes` asks for that much room at once
    (the card is full). Games the director holds go first, oldest first; then, only if the
    journal is still too big, the oldest of the others.
    """
    held = -1 if held_through is None else held_through
    total = sum(s.size for s in segments)
    budget = retention.keep_mb * MB
    chosen = []
    for collected in (True, False):
        for segment in segments:
            if (segment.last <= held) != collected:
                continue
            too_big = total > budget or need_bytes > 0
            too_old = collected and now_s - segment.mtime > retention.keep_days * DAY_S
            if too_big or too_old:
                chosen.append((segment, not collected))
                total -= segment.size
                need_bytes -= segment.size
    return chosen


class Pruning:
    """Which games the director holds, and removing the games `retention` lets go from `store`
    (a `SegmentStore`); `note(detail, extra)` says what went before the director held it."""

    def __init__(self, store, retention, note):
        self.store = store
        self.retention = retention
        self.note = note
        #: the highest seq the director holds (an `ack`, or an export), or None
        self.held = None

    def read(self):
        """Read the marks of what the director holds (at start). Raises OSError."""
        directory = self.store.directory
        held = [files.read_mark(directory, mark) for mark in (files.COLLECTED, files.EXPORTED)]
        self.held = max((h for h in held if h is not None), default=None)

    def mark_held(self, seq):
        """The director holds every record up to `seq`: mark the end of the last whole game held
        (at most once a game, so a flood of acks costs no writes). Raises OSError."""
        ends = [first - 1 for first in self.store.segments if first - 1 <= seq]
        through = max(ends, default=None)
        if through is None or (self.held is not None and through <= self.held):
            return
        files.set_mark(self.store.directory, files.COLLECTED, through)
        self.held = through

    def _finished_segments(self):
        infos = []
        segments = self.store.segments
        for first, following in zip(segments, segments[1:], strict=False):
            if self.store.waits_for_repair(first):
                continue  # its damaged bytes are not kept aside yet
            try:
                stat = os.stat(self.store.path(first))
            except FileNotFoundError:
                continue
            infos.append(SegmentInfo(first, following - 1, stat.st_size, stat.st_mtime))
        return infos

    def prune(self, need_bytes=0):
        """Remove the games retention lets go; returns how many. Raises OSError."""
        chosen = choose(self._finished_segments(), self.retention, self.held, time.time(), need_bytes)
        for info, unheld in chosen:
            self._keep_damage_aside(self.store.path(info.first))  # damaged bytes are never deleted
            self.store.remove(info.first)
            if unheld:
                self.note(
                    f"seq {info.first}-{info.last} pruned before the director held it, to make room",
                    {"pruned": [info.first, info.last]},
                )
        if chosen:
            self.store.removed()
        return len(chosen)

    def _keep_damage_aside(self, path):
        """Before a finished game goes: if its file was damaged after it was written (read back
        only a line at a time since, which leaves bad lines out), copy it into `damaged/` and say so.
        Raises OSError if the copy cannot be made: then the game is not pruned."""
        segment = files.Segment(path)
        if segment.needs_repair:
            kept = segment.keep_aside()
            lines = ", ".join(f"line {number}: {what}" for number, what in segment.problems) or "its end"
            self.note(
                f"{os.path.basename(path)} damaged ({lines}); pruned as retention says, its bytes "
                f"kept as {os.path.relpath(kept, self.store.directory)}",
                {},
            )

    def make_room(self):
        """The card is full: prune the oldest finished game (held ones first) to go on writing."""
        try:
            return self.prune(need_bytes=1) > 0
        except OSError:
            return False
