"""A picture of a game: each side's remaining time across it, with every event that mattered marked.

`picture()` turns a game's records into plain data (the lines and marks to draw) and needs nothing
outside the standard library; `figure()` draws that data with matplotlib, which comes with the
optional `director` extra (`pip install 'tileclock[director]'`) and is never installed on a clock.

Between two records nothing changes but the running side's time, which falls at one second per
second, so a straight line between the points at each record is exact. A correction is a vertical
step in that side's line at its instant. Below zero is overtime; each penalty step is marked where
the record put it, and the penalty of each side is drawn as a staircase under the times.
"""

import io
import os
from dataclasses import dataclass, field

from ...clock.timecode import format_clock
from ...wire.records import SIDES
from .actions import clock_actions

COLOURS = {"A": "#1f5fa8", "B": "#c85a00"}


class DirectorExtraMissing(RuntimeError):
    """matplotlib is not installed: the pictures come with the `director` extra."""


@dataclass
class Mark:
    """Something that happened at an instant, drawn on a side's line (or across both when side is None)."""

    kind: str  # turn, overtime, penalty, late_penalty, correction, forfeit, arrived, end
    side: str | None
    t_ms: int
    remaining_ms: int | None
    label: str = ""


@dataclass
class Span:
    """A stretch of the game: both clocks stopped, or a side absent (its late start running)."""

    kind: str  # stopped, absent
    start_ms: int
    end_ms: int
    side: str | None = None


@dataclass
class Picture:
    """What a game's picture shows, as data: points in ms since the game's start."""

    title: str
    remaining: dict  # side -> [(t_ms, remaining_ms)]
    penalty: dict  # side -> [(t_ms, penalty)] at each change
    marks: list = field(default_factory=list)
    spans: list = field(default_factory=list)
    end_ms: int = 0

    def marks_of(self, kind, side=None):
        """The marks of one kind (and side)."""
        return [m for m in self.marks if m.kind == kind and (side is None or m.side == side)]


def _records(game):
    return list(getattr(game, "records", game))


def _starting_ms(first):
    time_ms = first.get("time_ms")
    if isinstance(time_ms, dict) and all(isinstance(time_ms.get(s), int) for s in SIDES):
        return dict(time_ms)
    limits = {}
    for side in SIDES:  # an older record: the limit is what the display and the time used add up to
        shown = first[side]["shown"]
        sign = -1 if shown.startswith("-") else 1
        minutes, _, seconds = shown.lstrip("-").partition(":")
        limits[side] = sign * (int(minutes) * 60 + int(seconds)) * 1000 + first[side]["used_ms"]
    return limits


def picture(game, title=""):
    """The `Picture` of `game` (its records from `new_game` on, or an object with `.records`)."""
    records = _records(game)
    limit = _starting_ms(records[0])
    remaining = {side: [] for side in SIDES}
    penalty = {side: [(records[0]["t_ms"], records[0][side]["pen"])] for side in SIDES}
    result = Picture(title, remaining, penalty)
    stopped_since = absent_since = None
    absent_side = None

    def add(side, t_ms, value):
        points = remaining[side]
        if not points or points[-1] != (t_ms, value):
            points.append((t_ms, value))

    for record in records:
        ev, t_ms = record["ev"], record["t_ms"]
        if ev == "set" and record.get("applies") == "this" and isinstance(record.get("time_ms"), dict):
            limit.update(record["time_ms"])  # the director's starting times, before anyone pressed
        if ev == "takeover" and isinstance(record.get("limit_ms"), dict):
            limit.update(record["limit_ms"])  # each side's limit on the dead clock, corrections in
        left = {side: limit[side] - record[side]["used_ms"] for side in SIDES}
        if ev == "adjust" and record.get("player") in SIDES:
            side = record["player"]
            add(side, t_ms, left[side])  # the step starts from where the line was
            limit[side] += record["delta_ms"]
            left[side] += record["delta_ms"]
            sign = "+" if record["delta_ms"] >= 0 else "-"
            result.marks.append(
                Mark(
                    "correction",
                    side,
                    t_ms,
                    left[side],
                    f"{sign}{format_clock(abs(record['delta_ms']) // 1000)}"
                    + (f" {_text(record['by'])}" if record.get("by") else ""),  # who asked
                )
            )
        for side in SIDES:
            add(side, t_ms, left[side])
            if record[side]["pen"] != penalty[side][-1][1]:
                penalty[side].append((t_ms, record[side]["pen"]))
        player = record.get("player")
        if ev == "switch" and record.get("button") in SIDES and not record.get("arrived"):
            result.marks.append(Mark("turn", record["button"], t_ms, left[record["button"]]))
        elif ev == "overtime" and player in SIDES:
            result.marks.append(Mark("overtime", player, t_ms, left[player], "overtime"))
        elif ev == "penalty" and player in SIDES:
            kind = "late_penalty" if record.get("kind") == "late" else "penalty"
            result.marks.append(Mark(kind, player, t_ms, left[player], f"-{record[player]['pen']}"))
        elif ev == "forfeit":
            for side in SIDES if player == "both" else [player] if player in SIDES else []:
                result.marks.append(
                    Mark("forfeit", side, t_ms, left[side], f"forfeit ({_text(record.get('reason', ''))})")
                )
        elif ev == "end":
            result.marks.append(Mark("end", None, t_ms, None, _text(record.get("reason", "end"))))
        elif ev == "takeover":  # a spare took the game up here (records/moved.py joins the parts)
            result.marks.append(
                Mark("director", None, t_ms, None, _text(f"taken over from {record['from']}"))
            )
        if ev in ("call", "call_answer", "reopen", "late_start", "set") or (ev == "end" and record.get("by")):
            for action in clock_actions([record]):  # the director's actions (and calls), in place
                by = f" ({action['by']})" if action["by"] else ""
                result.marks.append(Mark("director", None, t_ms, None, _text(action["what"] + by)))
        if ev == "late_start":
            absent_since, absent_side = t_ms, player
        elif absent_since is not None and (record.get("arrived") or ev in ("forfeit", "end")):
            result.spans.append(Span("absent", absent_since, t_ms, absent_side))
            if record.get("arrived") in SIDES:
                arrived = record["arrived"]
                result.marks.append(Mark("arrived", arrived, t_ms, left[arrived], "arrived"))
            absent_since = absent_side = None
        if record.get("state") == "paused" and stopped_since is None:
            stopped_since = t_ms
        elif record.get("state") != "paused" and stopped_since is not None:
            result.spans.append(Span("stopped", stopped_since, t_ms))
            stopped_since = None
        if ev == "end":
            break  # what follows an end (a status) changes nothing
    result.end_ms = records[min(len(records) - 1, _end_index(records))]["t_ms"]
    if stopped_since is not None:
        result.spans.append(Span("stopped", stopped_since, result.end_ms))
    if absent_since is not None:
        result.spans.append(Span("absent", absent_since, result.end_ms, absent_side))
    return result


def _text(value, limit=40):
    """A record's text as a label: a string, at most `limit` characters (a reason is a word or two)."""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _end_index(records):
    return next((i for i, r in enumerate(records) if r["ev"] == "end"), len(records) - 1)


# --- drawing (matplotlib, from the director extra)


def available():
    """True when matplotlib (the `director` extra) is installed."""
    try:
        import matplotlib  # noqa: F401  (only asks whether it is there)
    except ImportError:
        return False
    return True


def _matplotlib():
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator
    except ImportError:
        raise DirectorExtraMissing(
            "game pictures need matplotlib: install the director extra (pip install 'tileclock[director]')"
        ) from None
    return Figure, FuncFormatter, MaxNLocator, MultipleLocator


def _tick_step_s(span_s):
    """Whole minutes between ticks, at most about ten ticks."""
    return next((step for step in (60, 120, 300, 600, 900, 1200, 1800, 3600) if span_s / step <= 10), 7200)


def _clock_label(seconds, _position=None):
    return format_clock(round(seconds))


def figure(pic, at_ms=None):
    """A matplotlib `Figure` of a `Picture`; `at_ms` draws a cursor at that instant.

    Every drawn element has a gid (`remaining-A`, `penalty-B`, `turns-A`, `stopped`, `cursor`...),
    which the SVG keeps as element ids.
    """
    Figure, FuncFormatter, MaxNLocator, MultipleLocator = _matplotlib()
    fig = Figure(figsize=(10, 6), layout="constrained")
    times, pens = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    s = 1 / 1000  # ms to s: the axes count seconds
    end_s = max(pic.end_ms * s, 1)
    for span in pic.spans:
        if span.kind == "stopped":
            times.axvspan(span.start_ms * s, span.end_ms * s, color="#999", alpha=0.25, lw=0, gid="stopped")
        else:
            times.axvspan(
                span.start_ms * s,
                span.end_ms * s,
                facecolor="none",
                edgecolor=COLOURS.get(span.side, "#555"),
                hatch="//",
                lw=0,
                alpha=0.5,
                gid=f"absent-{span.side}",
            )
    times.axhline(0, color="#b00", lw=1, gid="overtime-line")
    for side in SIDES:
        colour = COLOURS[side]
        xs, ys = zip(*[(t * s, v * s) for t, v in pic.remaining[side]], strict=True)
        times.plot(xs, ys, color=colour, lw=1.8, label=f"{side} remaining", gid=f"remaining-{side}")
        styles = {
            "turn": dict(marker="|", ms=9, mew=1.2),
            "overtime": dict(marker="o", ms=7, mfc="white", mew=1.5),
            "penalty": dict(marker="v", ms=7),
            "late_penalty": dict(marker="s", ms=6),
            "correction": dict(marker="D", ms=6, mfc="white", mew=1.5),
            "forfeit": dict(marker="X", ms=12),
            "arrived": dict(marker="*", ms=10),
        }
        for kind, style in styles.items():
            marks = pic.marks_of(kind, side)
            if not marks:
                continue
            gid = {"turn": "turns", "correction": "corrections"}.get(kind, kind.replace("_", "-"))
            times.plot(
                [m.t_ms * s for m in marks],
                [m.remaining_ms * s for m in marks],
                linestyle="none",
                color=colour,
                gid=f"{gid}-{side}",
                **style,
            )
            if kind in ("penalty", "late_penalty", "correction", "forfeit"):
                for mark in marks:
                    left = kind == "forfeit"  # the game's last instant: the label goes to the left
                    times.annotate(
                        mark.label,
                        (mark.t_ms * s, mark.remaining_ms * s),
                        textcoords="offset points",
                        xytext=(-8 if left else 4, 6 if kind == "correction" else -12),
                        fontsize=7,
                        color=colour,
                        ha="right" if left else "left",
                        parse_math=False,  # record text is never mathtext: `$\frac{$` hung the picture
                    )
        steps = pic.penalty[side] + [(pic.end_ms, pic.penalty[side][-1][1])]
        pens.step(
            [t * s for t, _ in steps],
            [p for _, p in steps],
            where="post",
            color=colour,
            lw=1.5,
            label=f"{side} penalty",
            gid=f"penalty-steps-{side}",
        )
    for mark in pic.marks_of("end"):
        times.axvline(mark.t_ms * s, color="black", lw=1, ls="--", gid="end")
    for number, mark in enumerate(pic.marks_of("director")):
        times.axvline(mark.t_ms * s, color="#70a", lw=0.8, ls=":", gid="director")
        times.annotate(mark.label, (mark.t_ms * s, 1), xycoords=("data", "axes fraction"), xytext=(2, -10 - 9 * (number % 3)),
                       textcoords="offset points", fontsize=6, color="#70a", parse_math=False)  # fmt: skip  # one call
    if at_ms is not None:
        for axes in (times, pens):
            axes.axvline(at_ms * s, color="#2a2", lw=1.5, gid="cursor")
    values = [v * s for side in SIDES for _, v in pic.remaining[side]]
    low, high = min(0, *values) - 30, max(values) + 90
    times.set_ylim(low, high)
    times.axhspan(low, 0, color="#f4d6d6", alpha=0.5, lw=0, gid="overtime-zone")
    times.set_xlim(0, end_s * 1.01)
    for axis, span in ((times.yaxis, high - low), (pens.xaxis, end_s)):
        axis.set_major_formatter(FuncFormatter(_clock_label))
        axis.set_major_locator(MultipleLocator(_tick_step_s(span)))
    # units on every axis: a newcomer read "penalty" as minutes and "game time" as a time of day
    times.set_ylabel("time left (min:s; below 0:00 overtime)")
    pens.set_ylabel("penalty (points)")
    pens.set_xlabel("game time (min:s since the game opened)")
    pens.yaxis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 5, 10], integer=True))
    times.legend(loc="upper right", fontsize=8, ncols=2)
    times.grid(alpha=0.3)
    pens.grid(alpha=0.3)
    if pic.title:
        times.set_title(pic.title, fontsize=10, parse_math=False)
    return fig


def _rendered(fig, fmt):
    from matplotlib import rc_context

    buffer = io.BytesIO()
    # a fixed salt and no date: the same game gives the same file
    with rc_context({"svg.hashsalt": "tileclock", "svg.fonttype": "none"}):
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(buffer, format=fmt, metadata=metadata, dpi=100)
    return buffer.getvalue()


def game_svg(game, title="", at_ms=None):
    """The picture of `game` (its records) as SVG text: for a web page."""
    return _rendered(figure(picture(game, title), at_ms), "svg").decode("utf-8")


def game_png(game, title="", at_ms=None):
    """The picture of `game` (its records) as PNG bytes."""
    return _rendered(figure(picture(game, title), at_ms), "png")


def rendered_pictures(game, title="", at_ms=None):
    """The picture of `game` in both formats: {"png": bytes, "svg": bytes}."""
    fig = figure(picture(game, title), at_ms)
    return {fmt: _rendered(fig, fmt) for fmt in ("png", "svg")}


def write_pictures(game, stem, title="", at_ms=None):
    """Write `stem.png` and `stem.svg` for `game`; returns the two paths."""
    paths = []
    for fmt, data in rendered_pictures(game, title, at_ms).items():
        path = f"{stem}.{fmt}"
        with open(path, "wb") as file:
            file.write(data)
        paths.append(path)
    return paths


def picture_format(path):
    """`png` or `svg`, by how `path` ends; ValueError for any other ending, naming the two."""
    extension = os.path.splitext(path)[1]
    if extension.lower() not in (".png", ".svg"):
        raise ValueError(
            f"{path}: a game's picture is written as a .png or a .svg file, not {extension or 'a name with no ending'}"
        )
    return extension[1:].lower()


def write_picture(game, path, title="", at_ms=None):
    """Write the picture of `game` to `path` (PNG or SVG, by its ending)."""
    fmt = picture_format(path)
    with open(path, "wb") as file:
        file.write(_rendered(figure(picture(game, title), at_ms), fmt))
    return path
