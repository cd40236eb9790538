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

from ..wire import segments as files

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
    """Removing the games retention lets go from the journal's folder (a mixin of `Journal`)."""

    def _finished_segments(self):
        infos = []
        for first, following in zip(self._segments, self._segments[1:], strict=False):
            if first in self._unrepaired:
                continue  # its damaged bytes are not kept aside yet
            try:
                stat = os.stat(self._path(first))
            except FileNotFoundError:
                continue
            infos.append(SegmentInfo(first, following - 1, stat.st_size, stat.st_mtime))
        return infos

    def _prune(self, need_bytes=0):
        """Remove the games retention lets go; returns how many."""
        chosen = choose(self._finished_segments(), self.retention, self._held, time.time(), need_bytes)
        for info, unheld in chosen:
            self._keep_damage_aside(self._path(info.first))  # damaged bytes are never deleted
            os.unlink(self._path(info.first))
            self._segments.remove(info.first)
            if unheld:
                self._note(
                    f"seq {info.first}-{info.last} pruned before the director held it, to make room",
                    {"pruned": [info.first, info.last]},
                )
        if chosen:
            files.fsync_dir(self.directory)
            self._first_disk_seq = self._segments[0] if self._segments else None
        return len(chosen)

    def _keep_damage_aside(self, path):
        """Before a finished game goes: if its file was damaged after it was written (read back
        only a line at a time since, which leaves bad lines out), copy it into `damaged/` and say so.
        Raises OSError if the copy cannot be made: then the game is not pruned."""
        segment = files.Segment(path)
        if segment.needs_repair:
            kept = segment.keep_aside()
            lines = ", ".join(f"line {number}: {what}" for number, what in segment.problems) or "its end"
            self._note(
                f"{os.path.basename(path)} damaged ({lines}); pruned as retention says, its bytes "
                f"kept as {os.path.relpath(kept, self.directory)}",
                {},
            )

    def _make_room(self):
        """The card is full: prune the oldest finished game (held ones first) to go on writing."""
        try:
            return self._prune(need_bytes=1) > 0
        except OSError:
            return False
