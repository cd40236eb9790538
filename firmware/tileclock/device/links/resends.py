"""Sets of seqs kept as a few ranges, however many seqs they hold, and what a link's resends still
owe, streamed from the journal (the serial link and the hall's uplink share it)."""

from bisect import insort

from ...clock.timecode import NS_PER_MS

#: How soon a link asks the loop to wake again while a resend streams out (`Resends.PER_WAKE` lines
#: a wake): the serial line's and the hall uplink's `next_wake_ns`.
STREAM_NS = 5 * NS_PER_MS


class SeqRanges:
    """Disjoint, sorted `[first, last]` ranges of seqs, at most `limit` of them.

    Past the limit the two ranges closest together are joined (the set then holds a few seqs
    more than asked for: for resends, a few lines sent twice rather than memory without bound).
    """

    def __init__(self, limit=32):
        self.limit = limit
        self.ranges = []

    def __bool__(self):
        return bool(self.ranges)

    def __len__(self):
        """How many seqs the set holds."""
        return sum(last - first + 1 for first, last in self.ranges)

    def __contains__(self, seq):
        return any(first <= seq <= last for first, last in self.ranges)

    def add(self, first, last):
        """Add `first`..`last`, joining every range it overlaps or touches."""
        if last < first:
            return
        kept = []
        for a, b in self.ranges:
            if b + 1 < first or a > last + 1:
                kept.append([a, b])
            else:
                first, last = min(a, first), max(b, last)
        insort(kept, [first, last])
        while len(kept) > self.limit:
            gaps = [kept[i + 1][0] - kept[i][1] for i in range(len(kept) - 1)]
            i = gaps.index(min(gaps))
            kept[i : i + 2] = [[kept[i][0], kept[i + 1][1]]]
        self.ranges = kept

    def remove(self, first, last):
        """Take `first`..`last` out of the set."""
        kept = []
        for a, b in self.ranges:
            if a < first:
                kept.append([a, min(b, first - 1)])
            if b > last:
                kept.append([max(a, last + 1), b])
        self.ranges = kept

    def without(self, other):
        """The ranges of `first`..`last` pairs in this set that are not in `other`."""
        result = SeqRanges(self.limit)
        result.ranges = [list(r) for r in self.ranges]
        for first, last in other.ranges:
            result.remove(first, last)
        return result

    def first(self):
        """The lowest seq held, or None."""
        return self.ranges[0][0] if self.ranges else None

    def clear(self):
        self.ranges = []

    def __str__(self):
        return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in self.ranges)


class Resends:
    """What a link owes the director after `resend` requests, read from `journal` a line at a time.

    Requests are kept as a few merged ranges (`SeqRanges`), so overlapping ones cost nothing more,
    and a seq resent since the queue was last empty is not owed again: a flood of `resend 0` costs
    one pass over the journal and no memory. The journal is read as a stream, a line per `next()`,
    so a link sends at most its budget of resent lines a wake however long the range.
    """

    #: resent lines a link sends per wake at most, so a long resend never holds the loop up
    PER_WAKE = 32

    def __init__(self, journal):
        self.journal = journal
        self._owed = SeqRanges()  # resends still to send
        self._resent = SeqRanges()  # resent since the queue was last empty: not owed again
        self._missing = SeqRanges()  # asked for, but the journal does not hold them
        self._stream = None  # [next seq, reader, last seq] of the owed range being read

    def __bool__(self):
        """Whether anything is owed."""
        return bool(self._owed)

    def ask(self, first, last):
        """Owe `first`..`last`, less what this pass has resent already."""
        asked = SeqRanges()
        asked.add(first, last)
        for a, b in asked.without(self._resent).ranges:
            self._owed.add(a, b)

    def give_back(self, seq):
        """Owe `seq` again: its line was taken but never got out whole."""
        self._owed.add(seq, seq)

    def next(self):
        """(seq, line) of the next record owed that the journal holds, or None when nothing is."""
        while self._owed:
            first, last = self._owed.ranges[0]
            if self._stream is None or self._stream[0] != first or self._stream[2] != last:
                self._stream = [first, self.journal.read(first, last), last]
            got = next(self._stream[1], None)
            if got is None:
                self._missing.add(first, last)
                self._owed.remove(first, last)
                self._stream = None
                continue
            seq, line = got
            self._missing.add(first, seq - 1)
            self._owed.remove(first, seq)
            self._resent.add(first, seq)
            self._stream[0] = seq + 1
            if not self._owed:
                self._resent.clear()  # the pass is over: a new request is a new request
            return seq, line
        return None

    def take_missing(self):
        """The seqs asked for that the journal does not hold, once each resend pass is over, as text."""
        if self._owed or not self._missing:
            return None
        text, self._missing = str(self._missing), SeqRanges()
        return text
