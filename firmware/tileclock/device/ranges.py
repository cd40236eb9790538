"""Sets of seqs kept as a few ranges, however many seqs they hold: what a resend still owes."""

from bisect import insort


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
