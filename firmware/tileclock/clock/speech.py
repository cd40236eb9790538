"""What the clock says to a blind player, in plain words: a pure function of its records.

Each side with speech on hears, through its own earphone, its own time on request (its own button
pressed while the other side's clock runs: an `ignored` record with reason `not_running`, which
never acts on the game), and by itself: 5:00 and 1:00 left, overtime, each penalty step, the clock
stopping or starting, a correction of its time, and the end. A side with speech off hears nothing.

The words are few and chosen so that a grammar-based recogniser decodes them (tests/data/
clock_phrases.jsgf; docs/player-guide.md): "you" and "opponent" rather than letters, "minutes"
and "seconds" always said, whole numbers in words. Nothing here reads time or plays sound: the
device speaks (device/speaker.py), and asks `next_warning_ns` when to wake for 5:00 and 1:00.
"""

from dataclasses import dataclass

from ..wire.records import SIDES
from .timecode import NS_PER_S

#: The times left (s) said by themselves, as the running side's display reaches them.
WARNINGS_S = (300, 60)

_UNITS = "zero one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


@dataclass(frozen=True)
class SpeechSetting:
    """Which sides hear the clock (`sides`: a subset of A, B), the voice's speed (words a minute)
    and loudness (0-200, espeak-ng's amplitude); `large`: the sides whose panel shows the
    large-digits face, for low vision (device/screen/face.py)."""

    sides: frozenset = frozenset()
    rate: int = 140
    volume: int = 100
    large: frozenset = frozenset()


def parse_sides(text):
    """`"A"`, `"B"`, `"AB"` (or `"BA"`) or `""` as a set of sides; ValueError otherwise."""
    if not isinstance(text, str) or any(c not in SIDES for c in text) or len(set(text)) != len(text):
        raise ValueError(f"expected A, B, AB or nothing, not {text!r}")
    return frozenset(text)


@dataclass(frozen=True)
class Utterance:
    """Something said to `side` at `t_ms` (the game's time); `kind` is `request` for an answer
    to the player's asking (a newer request replaces an older one still waiting), else `event`."""

    t_ms: int
    side: str
    text: str
    kind: str = "event"


def number(n):
    """A whole number 0-999,999 in words: `twelve`, `twenty four`, `one hundred ten`."""
    if not 0 <= n <= 999_999:
        raise ValueError(f"no words for {n}")
    if n >= 1000:
        thousands, rest = divmod(n, 1000)
        return f"{number(thousands)} thousand" + (f" {number(rest)}" if rest else "")
    if n >= 100:
        hundreds, rest = divmod(n, 100)
        return f"{_UNITS[hundreds]} hundred" + (f" {number(rest)}" if rest else "")
    if n < 10:
        return _UNITS[n]
    if n < 20:
        return _TEENS[n - 10]
    tens, units = divmod(n, 10)
    return _TENS[tens] + (f" {_UNITS[units]}" if units else "")


def duration(seconds):
    """A whole number of seconds as said: `twelve minutes thirty`, `one minute`, `forty seconds`,
    `no time` (minutes up to 99, as a side's allowance)."""
    minutes, secs = divmod(seconds, 60)
    if minutes == 0:
        return "no time" if secs == 0 else "one second" if secs == 1 else f"{number(secs)} seconds"
    said = "one minute" if minutes == 1 else f"{number(minutes)} minutes"
    return said + (f" {number(secs)}" if secs else "")


def points(pen):
    return "one point" if pen == 1 else f"{number(pen)} points"


def shown_seconds(shown):
    """A record's `shown` (`"12:30"`, `"-1:05"`) as signed whole seconds."""
    sign = -1 if shown.startswith("-") else 1
    minutes, secs = shown.lstrip("-").split(":")
    return sign * (int(minutes) * 60 + int(secs))


def time_left(shown_s, pen):
    """A side's time as said on request: `twelve minutes thirty left`, or in overtime
    `one minute five over, twenty points`."""
    if shown_s >= 0:
        return f"{duration(shown_s)} left"
    return f"{duration(-shown_s)} over, {points(pen)}"


def penalty_step(shown_s, pen):
    """A penalty step as said: `one minute over, twenty points` (whole minutes over); at the first
    step, with `overtime` before it, only `ten points`."""
    minutes = max(0, -shown_s) // 60
    if minutes == 0:  # the first step, or a correction that took the side back out of overtime
        return points(pen)
    return ("one minute" if minutes == 1 else f"{number(minutes)} minutes") + f" over, {points(pen)}"


def _side(record, side):
    state = record[side]
    return shown_seconds(state["shown"]), state["pen"]


def said(record, sides):
    """What a record (a dict, as `Record.as_dict` gives it) makes the clock say to `sides`, a set
    of sides with speech on: a list of `Utterance`s, in order (often none)."""
    ev, t_ms = record["ev"], record["t_ms"]
    to = [side for side in SIDES if side in sides]

    def each(text_for, kind="event"):
        return [Utterance(t_ms, side, text, kind) for side in to if (text := text_for(side))]

    def own(side, text_for):
        return each(lambda s: text_for() if s == side else None)

    player = record.get("player")
    match ev:
        case "ignored" if record.get("reason") == "not_running" and record.get("button") in SIDES:
            button = record["button"]
            return each(lambda s: time_left(*_side(record, s)) if s == button else None, "request")
        case "overtime" if player in SIDES:
            return own(player, lambda: "overtime")
        case "penalty" if player in SIDES and record.get("kind") == "overtime":
            return own(player, lambda: penalty_step(*_side(record, player)))
        case "pause":
            return each(lambda s: f"clock stopped, {time_left(*_side(record, s))}")
        case "start" | "resume":
            return each(lambda s: "your clock runs" if record["run"] == s else "opponent's clock runs")
        case "adjust" if player in SIDES:
            delta_s = abs(record["delta_ms"]) // 1000
            how = "added" if record["delta_ms"] > 0 else "taken off"
            return own(
                player, lambda: f"correction, {duration(delta_s)} {how}, {time_left(*_side(record, player))}"
            )
        case "forfeit":
            return each(lambda s: _forfeit(record, s))
        case "end" if "supersedes" not in record and record.get("reason") != "forfeit":
            return each(
                lambda s: "round over, game over" if record.get("reason") == "round_over" else "game over"
            )
        case "new_game":
            return each(lambda s: "new game")
    return []


def _forfeit(record, side):
    player, reason = record.get("player"), record.get("reason")
    if player == "both":
        return "game over, both forfeit"
    if reason == "overtime_limit":
        return "game over, you lose on time" if player == side else "game over, opponent loses on time"
    return "game over, you forfeit" if player == side else "game over, opponent forfeits"


def warning(t_ms, side, shown_s, sides):
    """What is said as `side`'s running display reaches `shown_s`: `five minutes left` at 5:00,
    `one minute left` at 1:00 (to that side only, if it hears), else nothing."""
    if shown_s in WARNINGS_S and side in sides:
        return [Utterance(t_ms, side, time_left(shown_s, 0))]
    return []


def next_warning_ns(shown_s, used_ns, t_ns):
    """When a running side whose display shows `shown_s` at `t_ns`, with `used_ns` charged, next
    reaches one of `WARNINGS_S`, or None. The display steps as a whole second more is used."""
    later = [s for s in WARNINGS_S if s < shown_s]
    if not later:
        return None
    steps = shown_s - max(later)
    return t_ns + (used_ns // NS_PER_S + steps) * NS_PER_S - used_ns


def merged(utterances):
    """Utterances to one side at one instant as one, joined by commas (a request kept a request)."""
    out = {}
    for item in utterances:
        key = (item.t_ms, item.side)
        last = out.get(key)
        if last is None:
            out[key] = item
        else:
            kind = "request" if "request" in (last.kind, item.kind) else "event"
            out[key] = Utterance(last.t_ms, last.side, f"{last.text}, {item.text}", kind)
    return list(out.values())
