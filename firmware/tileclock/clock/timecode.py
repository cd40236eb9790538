"""Exact time units, and the two text forms of time the clock reads and writes.

All time inside tileclock is an integer count of nanoseconds. Seconds as text
(`95.25`, `25:01.000`) are parsed digit by digit, never through a float, so a
script or a config says exactly what the clock does.
"""

import re

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000

_TIME = re.compile(r"^(?:(\d+):([0-5]\d)|(\d+))(?:\.(\d{1,9}))?$")


def parse_seconds(text):
    """Parse `95.25`, `95`, `1:35` or `25:01.000` into integer nanoseconds.

    Raises ValueError naming the text when it is not one of those forms.
    """
    match = _TIME.match(text.strip())
    if not match:
        raise ValueError(f"not a time: {text!r} (use seconds like 95.25 or m:ss like 25:01.000)")
    minutes, seconds, plain, fraction = match.groups()
    whole = int(plain) if plain is not None else int(minutes) * 60 + int(seconds)
    frac_ns = int((fraction or "").ljust(9, "0"))
    return whole * NS_PER_S + frac_ns


def parse_clock_time(text):
    """Parse a starting time given as `m:ss` (whole seconds) into nanoseconds.

    A bare number is refused rather than guessed at: a director writing `30` means minutes, a
    script writing `30` means seconds; the error says which text to write instead.
    """
    if re.fullmatch(r"\s*\d+\s*", text):
        minutes = int(text)
        raise ValueError(f'a starting time is m:ss: use "{minutes}:00" for {minutes} minutes')
    ns = parse_seconds(text)
    if ns % NS_PER_S:
        raise ValueError(f"a starting time is whole seconds: {text!r}")
    return ns


def format_clock(seconds):
    """Format a signed whole-second display value: 1500 -> `25:00`, -61 -> `-1:01`."""
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    return f"{sign}{seconds // 60}:{seconds % 60:02d}"


def ms(ns):
    """Whole milliseconds of a nanosecond count (floor), as records carry them."""
    return ns // NS_PER_MS


_SHOWN = re.compile(r"^(-?)(\d+):([0-5]\d)$")


def parse_clock(shown):
    """The inverse of `format_clock`: `-1:01` -> -61; ValueError for anything else."""
    match = _SHOWN.match(shown)
    if not match:
        raise ValueError(f"not a displayed time: {shown!r}")
    sign, minutes, seconds = match.groups()
    return (-1 if sign else 1) * (int(minutes) * 60 + int(seconds))
