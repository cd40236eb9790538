"""The director's actions (and the board's calls) as a game's own records tell them.

Read by the page's table history (`hall/audit_read.py`), `tileclock replay` and the sheet's notes:
each action with its instant, what it was, the way it came (`source`) and who asked (`by`, when the
command named it: docs/protocol.md).
"""

from datetime import UTC, datetime

from ...clock.timecode import format_clock
from ...wire.records import SIDE_SETTINGS

#: the clock's records that are a director's action (or a call)
DIRECTOR_EVENTS = ("adjust", "late_start", "reopen", "set", "call", "call_answer", "end", "new_game")


def clock_actions(records, refusals=False):
    """What a game's records say the director (or a call) did: one dict each, in order, with its
    seq, `t_ms`, what it was, the way it came and who asked (`by`, when the command named it).
    With `refusals`, the `error` records that refused a director's request (or a chord) too."""
    actions = []
    for record in records:
        ev = record.get("ev")
        # an `end` of a round over, a `new_game` the director's `new game` opened (it says its way)
        wanted = ev in DIRECTOR_EVENTS and (ev != "end" or record.get("reason") == "round_over")
        wanted = wanted and (ev != "new_game" or "source" in record)
        if not (wanted or (refusals and ev == "error" and _refusal(record))):
            continue
        what = {
            "adjust": lambda r: f"{r.get('player')} {_signed(r.get('delta_ms'))}",
            "late_start": lambda r: f"late start, {r.get('player')} absent",
            "reopen": lambda r: "game reopened",
            "set": _set_words,
            "call": lambda r: "the board called the director",
            "call_answer": lambda r: f"call {r.get('call')} {r.get('answer')}",
            "end": lambda r: "round over",
            "new_game": lambda r: "new game",
            "error": lambda r: f"refused: {str(r.get('detail'))[:200]}",
        }[ev](record)
        actions.append(
            {
                "seq": record.get("seq"),
                "t_ms": record.get("t_ms"),
                "ev": ev,
                "what": what,
                "source": record.get("source", "buttons" if ev == "call" else None),
                "by": record.get("by"),
                "A": (record.get("A") or {}).get("shown"),
                "B": (record.get("B") or {}).get("shown"),
            }
        )
    return actions


def _refusal(record):
    """Whether an `error` record refused something asked of the game (a director's request names
    who asked; a chord's names no one), not a line the link garbled or a resend it could not serve."""
    if record.get("by"):
        return True
    detail = str(record.get("detail", ""))
    link = ("line" in record, "holds" in record, detail.startswith(("resend", "bad commands", "code:")))
    return not any(link)


def _set_words(record):
    """What a `set` set, in words: `set round 3, table 12, A starts 30:00 (this game), round start
    14:00:00 UTC, time of day 13:58:02 UTC` (only what the record carries)."""
    words = [f"{key} {record[key]}" for key in ("round", "table") if key in record]
    times = record.get("time_ms")
    if isinstance(times, dict):
        game = "this game" if record.get("applies") == "this" else "next game"
        starts = ", ".join(f"{side} starts {_clock(ms)}" for side, ms in sorted(times.items()))
        words.append(f"{starts} ({game})")
    if "start_ms" in record:
        late = record.get("late_ms")
        words.append(
            f"round start {_time_of_day(record['start_ms'])}" + (f" ({_clock(late)} late)" if late else "")
        )
    if "wall_ms" in record:
        words.append(f"time of day {_time_of_day(record['wall_ms'])}")
    for key in SIDE_SETTINGS:  # who hears the clock, who has large digits, from then on
        if key in record:
            words.append(f"{key} {record[key] or 'off'}")
    return "set " + ", ".join(words)


def _clock(ms):
    return format_clock(ms // 1000) if isinstance(ms, int) else "?"


def _time_of_day(ms):
    """`ms` since 1970 as a UTC time of day, `14:00:00 UTC` (the clock's wall times are UTC)."""
    try:
        return datetime.fromtimestamp(ms // 1000, UTC).strftime("%H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError, OSError):  # a record read back is never trusted
        return "?"


def _signed(delta_ms):
    if not isinstance(delta_ms, int):
        return "?"
    return ("-" if delta_ms < 0 else "+") + format_clock(abs(delta_ms) // 1000)


def action_line(action):
    """One action in words: `12:30.000 B +1:00 (hall, by page-3f2a)`."""
    way = ", ".join(
        part for part in (action["source"], f"by {action['by']}" if action["by"] else None) if part
    )
    t_ms = action["t_ms"] if isinstance(action["t_ms"], int) else 0
    when = f"{format_clock(t_ms // 1000)}.{t_ms % 1000:03d}"
    return f"{when} {action['what']}" + (f" ({way})" if way else "")
