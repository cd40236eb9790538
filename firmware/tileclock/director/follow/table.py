"""The director's live table: every clock at a glance, fitted to the terminal, drawn apart from the reading.

`screen_lines` is pure: rows in, the lines that fit out. A summary line per
state first, then what needs the director's attention (ports down, clocks
waiting for records, faults, notices), then as many boards as fit. `LiveView`
draws it from its own thread, at most twice a second and only when something
changed, so a terminal that reads slowly never slows the reading of the ports.
"""

import shutil
import textwrap
import threading
from dataclasses import dataclass, field

DRAW_EVERY_S = 0.5
STATES = ("running", "paused", "ready", "ended")
#: a state as the table says it: the panels' and the page's words (a stopped clock is "stopped")
WORDS = {"running": "playing", "paused": "stopped", "ready": "ready", "ended": "ended", "?": "?"}


@dataclass(frozen=True)
class Row:
    """One clock as the table shows it."""

    board: str
    clock_id: str
    state: str  # ready, running, paused, ended, or "?" before any record
    sides: str  # "*A 24:10   0   B 25:00   0"
    seq: int
    port: str
    attention: tuple = ()  # what is wrong, in full ("waiting for 12 records", "fault: panel A ...")


@dataclass(frozen=True)
class Snapshot:
    """Everything the table shows, copied out of the collector at one instant."""

    rows: tuple
    ports_down: tuple = ()  # (port, reason) of ports that are not open
    ports_silent: tuple = ()  # ports open with no record yet
    notices: tuple = ()  # the newest notices, newest last
    totals: dict = field(default_factory=dict)  # records, bad lines, rejects


HEADER = (
    f"{'board':>8}  {'clock':12}  {'state':8}  {'A':>8} {'pen':>4}    {'B':>8} {'pen':>4}  {'seq':>7}  port"
)


def row_text(row):
    """A board's line in the table."""
    state = WORDS.get(row.state, row.state)
    return f"{row.board:>8}  {row.clock_id:12}  {state:8}  {row.sides}  {row.seq:>7}  {row.port}"


def ticking(shown, used_ms, elapsed_ms):
    """A running side's display `elapsed_ms` after the record that said `shown` with `used_ms`
    charged: a whole second off for each second boundary its time crosses, as the clock counts
    (the page's clocks tick the same way). Anything that is not `m:ss` stays as it is."""
    negative, _, rest = shown.partition("-") if shown.startswith("-") else ("", "", shown)
    minutes, colon, secs = rest.partition(":")
    if not (colon and minutes.isdigit() and secs.isdigit() and len(secs) == 2) or elapsed_ms <= 0:
        return shown
    value = (int(minutes) * 60 + int(secs)) * (-1 if shown.startswith("-") else 1)
    value -= (used_ms + elapsed_ms) // 1000 - used_ms // 1000
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 60}:{abs(value) % 60:02d}"


def _count(n, noun):
    """`1 clock`, `2 clocks`."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def screen_lines(snapshot, columns=None, height=None):
    """The lines of the table; with `height` (and `columns`), only what fits, the urgent first."""
    totals = snapshot.totals
    lines = [
        f"{_count(len(snapshot.rows), 'clock')} on {_count(totals.get('ports', 0), 'port')}; "
        f"{totals.get('records', 0)} records, "
        f"{totals.get('bad_lines', 0)} bad lines, {totals.get('rejects', 0)} rejected"
    ]
    for state in STATES + ("?",):
        boards = [row.board for row in snapshot.rows if row.state == state]
        if boards:
            lines.append(
                f"{WORDS[state] if state != '?' else 'no record':>9} {len(boards):4}: {' '.join(boards)}"
            )
    attention = [f"port {port} DOWN: {reason}" for port, reason in snapshot.ports_down]
    attention += [f"port {port}: open, no record yet" for port in snapshot.ports_silent]
    for row in snapshot.rows:
        attention += [f"board {row.board} ({row.clock_id}, {row.port}): {what}" for what in row.attention]
    attention += [f"note: {text}" for text in snapshot.notices]
    if attention:
        lines.append("needs attention:")
        for text in attention:  # in full: wrapped, never cut
            lines += textwrap.wrap(
                text, columns or len(text) + 4, initial_indent="  ", subsequent_indent="    "
            )
    lines.append(HEADER)
    boards = [row_text(row) for row in sorted(snapshot.rows, key=_board_order)]
    if height is None:
        return lines + boards
    lines = [_fit(line, columns) for line in lines]
    room = height - len(lines)
    if room <= 0:
        return lines[: height - 1] + [f"... ({len(lines) - height + 1} more lines, {len(boards)} boards)"]
    if len(boards) > room:
        boards = boards[: room - 1] + [f"... and {len(boards) - room + 1} more boards"]
    return lines + [_fit(line, columns) for line in boards]


def _board_order(row):
    return (0, int(row.board)) if row.board.isdigit() else (1, row.board)


def _fit(line, columns):
    """Cut a line to the terminal's width (what needs attention wraps instead)."""
    if columns is None or len(line) <= columns:
        return line
    return line[: columns - 1] + "…"


class LiveView:
    """Draws `snapshot()` on `out` from a thread of its own, when `changed()` says so."""

    def __init__(self, out, snapshot, version, draw_every_s=DRAW_EVERY_S):
        # `version()` changes with every change to show: a new record, and each second a clock runs
        self.out = out
        self.snapshot = snapshot
        self.version = version
        self.draw_every_s = draw_every_s
        self.draws = 0
        self._drawn = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-table", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=2 * self.draw_every_s)

    def _run(self):
        while not self._stop.wait(self.draw_every_s):
            version = self.version()
            if version == self._drawn:
                continue
            self._drawn = version
            size = shutil.get_terminal_size()
            lines = screen_lines(self.snapshot(), size.columns, size.lines - 1)
            try:
                self.out.write("\x1b[H\x1b[J" + "\n".join(lines) + "\n")
                self.out.flush()
            except (OSError, ValueError):
                return  # the terminal is gone; the reading goes on
            self.draws += 1
