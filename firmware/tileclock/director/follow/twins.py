"""Which log of a clock id a record goes to, when one id has more than one log (docs/hall.md,
"What the hall trusts").

A clock id names one log until a record proves otherwise: a seq that comes again with other
contents, or a `boot` below where the log is with a start it never saw. Then a second log of the
same id (`CLOCK_r2`, `_r3`...) takes that record, and from then on each record goes to the log it
continues: the one already holding it (a repeat), the one a port feeds alone (`collect`: a port
is one clock), else the one waiting for its seq whose last record it can follow (the side that
was not running kept its time, the game's time did not go back), else the one it is ahead of by
the least. If the older log goes on taking new records, two clocks run at once with one id: the
director is told, loudly, and the two logs stay apart. A clock whose journal was replaced (a new
card) leaves its old log quiet, and is said as such.
"""

#: what `ClockLog.verdict` may say of a record, best first for taking it
_RANK = {"next": 0, "ahead": 1}
#: events after which a side's time may change without running (a correction, a recovery...)
_MOVES_TIME = {"adjust", "recovered", "late_start", "arrived", "set", "reopen", "forfeit", "end"}


def follows(last, record, boot_ids=()):
    """Whether `record` can be the next record of a log whose last record is `last` (with the
    `boot_ids` it has seen): a cheap test of the protocol's promise that between two records
    nothing changes but the running side's time, and a game's time never goes back."""
    if last is None or record["ev"] == "boot":
        return True
    if record["ev"] == "new_game":
        boot = record.get("boot_id")
        return boot is None or not boot_ids or boot in boot_ids
    if last["ev"] == "boot" or record["ev"] in _MOVES_TIME:
        return True
    if record["t_ms"] < last["t_ms"]:
        return False
    running = last["run"]
    for side in "AB":
        before, after = last[side]["used_ms"], record[side]["used_ms"]
        if side == running or (running is None and last["state"] == "running"):  # (both late: both run)
            if after < before:
                return False
        elif after != before:
            return False
    return True


def choose(logs, record, line, source):
    """The log of `logs` (one clock id's, oldest first) that `record` (its framed `line`, from
    `source`) goes to, and how it fits (`ClockLog.verdict`); (None, why) if it fits none: a second
    clock with this id, or its journal begun again."""
    seq = record["seq"]
    verdicts = [(log, log.verdict(seq, line)) for log in logs]
    fits = [(log, verdict) for log, verdict in verdicts if verdict != "conflict"]
    if record["ev"] == "boot" and all(
        verdict in ("old", "conflict")
        and (record.get("boot_id") not in log.boot_ids or log.port not in (None, source))
        for log, verdict in verdicts
    ):  # a start none of them saw (or heard on another port: one machine's clocks share a boot id)
        return None, "boot"  # below where each is: a new journal
    if not fits:
        return None, "conflict"
    if len(logs) == 1:
        return fits[0]
    following = [
        log for log, verdict in fits if verdict == "next" and follows(log.last, record, log.boot_ids)
    ]
    for log, verdict in fits:  # a repeat of what one log holds, unless another log's next record is
        if verdict == "same" and not following:  # the same (two games alike so far: both keep it)
            return log, verdict
    fed = [log for log in logs if log.port == source]
    if len(fed) == 1 and any(log is fed[0] for log, _ in fits):  # a port is one clock
        return next((log, verdict) for log, verdict in fits if log is fed[0])
    live = [(log, verdict) for log, verdict in fits if verdict in _RANK]
    plausible = [(log, verdict) for log, verdict in live if follows(log.last, record, log.boot_ids)]
    old = [(log, verdict) for log, verdict in fits if verdict == "old"]
    if not plausible and old:  # a resend of records one log had long ago, not the next of another
        return max(old, key=lambda pair: pair[0].expected)
    pool = plausible or live or old
    return min(pool, key=lambda pair: (_RANK.get(pair[1], 2), seq - pair[0].expected))
