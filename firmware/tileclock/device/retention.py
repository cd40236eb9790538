"""How long the journal keeps finished games, and which to prune first.

A game is pruned whole (its segment), oldest first. A game the director
holds (acknowledged on the line, or exported) goes once it is older than
`keep_days` or the journal is larger than `keep_mb`. A game the director does
not hold yet is pruned only to stay under `keep_mb` (or when the card is full),
and each such game is reported in a `fault` record.
"""

from dataclasses import dataclass

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
