"""A scripted director for `tileclock hall-demo --director` (docs/hall.md, "The demo"): it plays a
director's round on the page's own paths, so everything it does is on the audit trail and in the
clocks' records exactly as a director's clicks would be, named `hall-demo` (each command's
`by=` its action's id on the trail, `hall-demo_RUN_N`).

Each round: start it (every board, in 10 s); answer the first call of the round on a board whose
game is in play, `taken`, give that board's B a minute (a correction: the clock is stopped for the
call), then `done`; after `round_s` seconds send round over; a new game on every board a little
later (a clock starts a round only on a fresh game), and the next round after that. A step the hall refuses
(the audit trail cannot be written, a board not heard from yet) is logged and tried again later.
"""

import logging
import threading
import time

from .board_routes import act_as, round_step_as

#: who the demo's actions name (a label, as a page session's is)
BY = "hall-demo"
#: seconds between the demo director's looks at the page's boards
LOOK_S = 0.5
#: seconds between the steps of answering a call (taken, the correction, done)
STEP_S = 2.0
#: seconds between round over and the next round's start
BETWEEN_S = 20.0
#: seconds between round over and the new game on every board (the ended games seen meanwhile)
NEW_GAME_S = BETWEEN_S / 2

log = logging.getLogger(__name__)


class DemoDirector:
    """The scripted director of `hall` (a started `HallPage`), each round `round_s` seconds long."""

    def __init__(self, hall, round_s=180.0, clock=time.monotonic):
        self.hall = hall
        self.round_s = round_s
        self.clock = clock
        self.round = 0
        self._round_from = None  # when the current round was started (this process's clock)
        self._over_at = None  # when round over was sent, or None while the round runs
        self._renewed = False  # whether the new games after this round over were sent
        self._answering = None  # (clock id, call seq, the next step, when it is due)
        self._answered = True  # whether this round's first call has been answered
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        """Play along in a thread of its own; returns self."""
        self._thread = threading.Thread(target=self._run, name="demo-director", daemon=True)
        self._thread.start()
        return self

    def close(self):
        """Stop playing (waits for the thread)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self):
        while not self._stop.wait(LOOK_S):
            try:
                self.step(self.clock())
            except (OSError, ValueError) as error:  # said, and tried again at the next look
                log.warning("demo director: %s", error)

    def step(self, now):
        """One look at the hall at `now` (seconds): the round's next step, and the call's."""
        if self._round_from is None or (self._over_at is not None and now - self._over_at >= BETWEEN_S):
            number = self.round % 99 + 1
            round_step_as(self.hall, BY, None, "start", number, "", "")  # every board, in 10 s
            self.round, self._round_from, self._over_at, self._answered = number, now, None, False
            return
        if self._over_at is None and now - self._round_from >= self.round_s:
            round_step_as(self.hall, BY, None, "over")
            self._over_at, self._answering, self._renewed = now, None, False
            return
        if self._over_at is not None and not self._renewed and now - self._over_at >= NEW_GAME_S:
            round_step_as(self.hall, BY, None, "new_game", "")  # every board: the next round's games
            self._renewed = True
            return
        if self._over_at is None:
            self._answer(now)

    def _answer(self, now):
        if self._answering is None:
            if self._answered:
                return
            # a call on a game in play only: a correction on an ended game would re-issue its result
            boards = self.hall.feed.snapshot()["boards"]
            calling = [b for b in boards if b.get("call") and b.get("state") in ("running", "paused")]
            if calling:
                board = calling[0]
                self._answering = (board["clock"], board["call"]["seq"], "taken", now + STEP_S)
            return
        clock, seq, what, due = self._answering
        if now < due:
            return
        if what == "taken":
            changed = {"call": seq, "answer": "taken"}
            act_as(self.hall, BY, None, "call", f"call taken {seq}", clock, changed)
            self._answering = (clock, seq, "adjust", now + STEP_S)
        elif what == "adjust":
            changed = {"side": "B", "delta_ms": 60_000}
            act_as(self.hall, BY, None, "adjust", "adjust B +60000", clock, changed)
            self._answering = (clock, seq, "done", now + STEP_S)
        else:
            act_as(self.hall, BY, None, "call", f"call done {seq}", clock, {"call": seq, "answer": "done"})
            self._answering, self._answered = None, True
