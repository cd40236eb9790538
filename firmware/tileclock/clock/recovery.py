"""Taking up the journal's last game after a restart or a power cut: the `GameClock`'s `recover`.

A mixin of `GameClock` (core.py): it rebuilds the game from its records (history.py) and says
with a `recovered` record what happened while the clock was down.
"""

from .history import Game, last_game, playable, rebuild, reconcile, record_instant_ns, stand_in_opening
from .records import SIDES
from .scene import Scene
from .state import State
from .timecode import format_clock, ms
from .view import Notice

RUNNING, PAUSED = State.RUNNING, State.PAUSED


class Recovery:
    """`GameClock.recover` and what only it uses."""

    def recover(self, records, now_ns, boot):
        """Rebuild the journal's last game from its `records` (dicts, oldest first) and go on at `now_ns`.

        `boot` is this start's boot record (with `boot_id`, the kernel's id of this boot). If the
        game's monotonic origin is from this boot, the process was restarted and the monotonic
        clock kept running: the game goes on exactly, the running side charged for the time the
        process was down, and whatever fell due meanwhile is recorded at its own instant. After a
        power cut the game comes back stopped as of its last record; the running side's time since
        that record is unknown: at most one checkpoint interval, and the time a checkpoint may take to
        stay on the card. Either way a `recovered` record
        says what happened. With no game in `records`, a new game starts.

        A record that cannot be played back is left out (`unplayable` lists each, with why: the
        device keeps it aside as damage); a game that cannot be taken up at all opens a new one,
        with a `fault` that says why. Whatever the journal holds, the clock starts.
        """
        seq = self.log.seq
        try:
            return self._take_up(records, now_ns, boot)
        except Exception as error:  # noqa: BLE001 - no journal may stop the clock
            self.log.seq, self.now_ns = seq, None
            self.log.flush()  # what the failed take-up made is dropped
            self.schedule.clear()
            self.scene, self.unplayable = Scene(), []
            made = self.new_game(now_ns, boot)
            detail = (
                f"the last game could not be taken up ({type(error).__name__} {error}): a new game "
                "is opened; the journal's records are kept"
            )
            return made + self.fault(now_ns, "journal", detail)

    def _take_up(self, records, now_ns, boot):
        game = self._game_in(records)
        if game is None:
            return self.new_game(now_ns, boot)
        _, self.unplayable = playable(game.records, self.rules)
        if self.unplayable:
            left_out = {seq for seq, _ in self.unplayable}
            records = [record for record in records if record["seq"] not in left_out]
            game = self._game_in(records)
        self.boot_id = boot.get("boot_id")
        self.log.seq = max(self.log.seq, records[-1]["seq"] + 1)
        last_at = record_instant_ns(game.records[-1])
        origin_boot = game.origin_boot_id()
        same_boot = origin_boot is not None and origin_boot == boot.get("boot_id")
        if same_boot:
            origin = [r for r in game.records if "mono_ns" in r][-1]["mono_ns"]
        else:
            origin = now_ns - last_at
        self._game = rebuild(game.records, origin, self.rules)
        notes = self._opening_note(game.first) + reconcile(self._game, game.records[-1], origin, self.rules)
        # the scene; the starting times a `set` gave this game are in the rebuilt state already
        self.scene.rebuild(records, boot.get("boot_id"), same_boot)
        self.gestures.new_game()
        self.now_ns = self.log.last_t_ns = self.schedule.done_ns = origin + last_at
        self.gestures.last_input_ns = now_ns
        was_running, running = self.run, self.state == RUNNING
        if same_boot:
            checkpoint_ms, self.checkpoint_ms = self.checkpoint_ms, None  # none for time nobody was there
            self._catch_up(max(now_ns, self.now_ns))  # penalties and forfeits that fell due while down
            self.checkpoint_ms = checkpoint_ms
            extra = {"reason": "restart", "down_ms": ms(now_ns - (origin + last_at))}
        else:
            if running:
                self.game.stop(self.now_ns, PAUSED)
            self.now_ns = self.schedule.done_ns = now_ns
            if not running:
                doubt_ms = 0
            elif self.checkpoint_ms is None:
                doubt_ms = None  # no checkpoints: no bound
            else:
                doubt_ms = self.checkpoint_ms + self.checkpoint_lag_ms
            extra = {"reason": "power_cut", "uncertain_ms": doubt_ms}
        self._emit("boot", self.now_ns, **boot)
        doubt_ms = extra.get("uncertain_ms")
        uncertain_s = -(-doubt_ms // 1000) if doubt_ms else 0  # shown in whole seconds, rounded up
        self.game.notice = Notice("recovered", uncertain_s=uncertain_s)
        self._emit("recovered", self.now_ns, was_running=was_running, mono_ns=self.game.t0_ns, **extra)
        for note in notes:  # what the records before the newest did not rebuild
            self._emit("fault", self.now_ns, part="journal", detail=f"the game taken up: {note}")
        return self._flush()

    def _game_in(self, records):
        """The game a restart takes up from `records` (a `Game`), or None: the last game; or, if its
        `new_game` is lost (damaged) but later records are there, the game they play, opened by a
        stand-in (see `stand_in_opening`)."""
        game = last_game(records)
        played = [index for index, record in enumerate(records) if record["ev"] != "boot"]
        if game is not None or not played:
            return game
        start_ms = {side: ms(self.start_ns[side]) for side in SIDES}
        lead = records[: played[0]]
        opening = stand_in_opening(records, self.rules.name, start_ms)
        return Game([opening, *records[played[0] :]], lead=lead, opened_in=lead[-1] if lead else None)

    def _opening_note(self, first):
        """What a game whose `new_game` is lost was taken up with."""
        if not first.get("stand_in"):
            return []
        times = ", ".join(f"{side} {format_clock(first['time_ms'][side] // 1000)}" for side in SIDES)
        return [
            f"its opening (new_game) is damaged: played under this clock's rules ({first['rules']}), "
            f"starting times {times} as its first record shows them, its start in this boot unknown"
        ]
