"""What a clock reads out without changing anything: the books, the idle time, the view, the next
deadline. Plain functions over the parts they are given; `GameClock` (core.py) answers its queries
with them.
"""

from ..wire.records import SIDES
from .state import State
from .timers import earliest
from .view import View


def balanced(game, t_ns):
    """Whether `game`'s books balance at `t_ns`: both sides' time and the stopped time, less the
    time charged to both at once, make the time since it opened (and what a spare took over)."""
    books = game.used_ns("A", t_ns) + game.used_ns("B", t_ns) + game.stopped_ns(t_ns) - game.shared_ns(t_ns)
    books -= game.carried_ns
    return books == t_ns - game.t0_ns


def idle_ns(game, last_input_ns, t_ns):
    """How long `game` has sat at `t_ns` with no clock running and no button touched since
    `last_input_ns` (None: none yet), or None while a clock runs."""
    if game.state == State.RUNNING:
        return None
    since = game.stopped_since_ns if last_input_ns is None else max(last_input_ns, game.stopped_since_ns)
    return max(0, t_ns - since)


def view(game, accounting, gestures, t_ns, call=None):
    """What the screens show of `game` at `t_ns`: the sides as `accounting` reads them, the
    buttons' hint and faults as `gestures` has them, the board's open `call` (calls.py)."""
    sides = {side: accounting.side_view(game, side, t_ns) for side in SIDES}
    faults = tuple(f"button {b}" for b in sorted(gestures.stuck))
    hint = gestures.hint(t_ns, game.state)
    round_left = accounting.round_left_s(game, t_ns)
    return View(
        game.state,
        game.run,
        sides["A"],
        sides["B"],
        hint,
        game.notice,
        faults,
        round_left,
        game.end_reason,
        call=call,
    )


def contacts_decided_by(contacts):
    """When every change of `contacts` made so far will have been decided (held the glitch window
    or found to be chatter), or None if none is undecided."""
    return max((timer.at_ns for timer in contacts.timers()), default=None)


def next_deadline(game, accounting, gestures, contacts, timer, now_ns):
    """The next instant after `now_ns` anything changes without an input: a record (`timer`, the
    game's earliest, or a contact's), a displayed digit, a hint."""
    safe = contacts.safe_until()
    contact = earliest(contacts.timers())
    candidates = [
        accounting.next_display_change(game, now_ns),
        gestures.next_hint_change(now_ns),
        timer.at_ns if timer and (safe is None or timer.at_ns <= safe[0]) else None,
        contact.at_ns if contact else None,
    ]
    candidates = [c for c in candidates if c is not None]
    return min(candidates) if candidates else None
