"""What falls due with no input: rule events (overtime, penalties, forfeits), the round's end, a
stuck button, a checkpoint, as `Timer`s from the parts that know of them. The clock's `Timeline`
(timeline.py) fires them in time order; what a rule event does to the game is play.py's.
"""

from .state import State
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind


def due_timers(game, done_ns, accounting, gestures, checkpoint_ms, last_t_ns):
    """The time-driven work of `game` (a `GameState`) from `done_ns` (how far it has been taken),
    as `Timer`s: rule events and the round's end (`accounting`), the buttons' (`gestures`), and a
    checkpoint `checkpoint_ms` (None: none) after the last record (at `last_t_ns`) while a side runs."""
    due = accounting.next_due(game, done_ns)
    if due:
        yield Timer(due[0], TimerKind.RULE, due[1])
    round_end = accounting.round_end_ns(game)
    if round_end is not None:
        yield Timer(max(round_end, done_ns), TimerKind.ROUND)
    if game.round_start_at is not None and game.state != State.ENDED:  # the director's set start
        yield Timer(max(game.round_start_at[0], done_ns), TimerKind.ROUND_START)
    yield from gestures.timers()
    if checkpoint_ms is not None and game.state == State.RUNNING:
        yield Timer(last_t_ns + checkpoint_ms * NS_PER_MS, TimerKind.CHECKPOINT)
