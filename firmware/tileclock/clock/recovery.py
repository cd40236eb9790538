"""Taking up the journal's last game after a restart or a power cut: a pure function from the
journal's records to what the clock goes on from (`TakenUp`), built on `history.rebuild`, the
one function that plays a game's records back (replay uses it too). `GameClock.recover` (core.py)
goes on from it and says with a `recovered` record what happened while the clock was down.
"""

from dataclasses import dataclass

from ..wire.records import SIDES
from .history import Game, last_game, playable, rebuild, reconcile, record_instant_ns, stand_in_opening
from .scene import Scene
from .state import GameState, State
from .timecode import format_clock, ms

RUNNING, PAUSED = State.RUNNING, State.PAUSED


@dataclass
class TakenUp:
    """The journal's last game, taken up: what the clock goes on from."""

    #: the game rebuilt from its records (stopped as of its newest record after a power cut)
    game: GameState
    #: the director's settings, rebuilt from the whole journal
    scene: Scene
    #: (seq, why) of each record that could not be played back, and was left out
    unplayable: list
    #: the seq after the journal's newest record
    next_seq: int
    #: the instant of the game's newest record, on this boot's monotonic clock
    last_ns: int
    #: whether the game's origin is an instant of this boot (a restart), not of an earlier one
    same_boot: bool
    #: whose clock ran as of the newest record
    was_running: str | None
    #: the `recovered` record's reason and what it says of the time the clock was down
    down: dict
    #: what the records before the newest did not rebuild (text), each said by a `fault`
    notes: list

    @property
    def uncertain_s(self):
        """What the panels say is uncertain after a power cut, in whole seconds (rounded up)."""
        doubt_ms = self.down.get("uncertain_ms")
        return -(-doubt_ms // 1000) if doubt_ms else 0


def take_up(records, now_ns, boot, rules, start_ns, checkpoint_ms=None, checkpoint_lag_ms=0):
    """The journal's last game in `records` (dicts, oldest first) taken up at `now_ns` in `boot`
    (this start's boot record, with `boot_id`), under `rules` (`start_ns`: the clock's starting
    times, for a game whose opening is lost); or None when `records` hold no game.

    If the game's monotonic origin is from this boot, the process was restarted and the monotonic
    clock kept running: the game goes on exactly from its newest record (the clock then charges
    the running side for the time it was down). After a power cut the game is stopped as of its
    newest record; the running side's time since then is unknown: at most one checkpoint interval
    (`checkpoint_ms`, None: no bound), and the time a checkpoint may take to reach the card
    (`checkpoint_lag_ms`). A record that cannot be played back is left out (`unplayable`).
    Raises on a journal whose last game cannot be taken up at all.
    """
    game = game_in(records, rules, start_ns)
    if game is None:
        return None
    _, unplayable = playable(game.records, rules)
    if unplayable:
        left_out = {seq for seq, _ in unplayable}
        records = [record for record in records if record["seq"] not in left_out]
        game = game_in(records, rules, start_ns)
    last_at = record_instant_ns(game.records[-1])
    origin_boot = game.origin_boot_id()
    same_boot = origin_boot is not None and origin_boot == boot.get("boot_id")
    if same_boot:
        origin = [r for r in game.records if "mono_ns" in r][-1]["mono_ns"]
    else:
        origin = now_ns - last_at
    state = rebuild(game.records, origin, rules)
    notes = opening_note(game.first) + reconcile(state, game.records[-1], origin, rules)
    # the scene; the starting times a `set` gave this game are in the rebuilt state already
    scene = Scene()
    scene.rebuild(records, boot.get("boot_id"), same_boot)
    last_ns = origin + last_at
    was_running, running = state.run, state.state == RUNNING
    if same_boot:
        down = {"reason": "restart", "down_ms": ms(now_ns - last_ns)}
    else:
        if running:
            state.stop(last_ns, PAUSED)
        if not running:
            doubt_ms = 0
        elif checkpoint_ms is None:
            doubt_ms = None  # no checkpoints: no bound
        else:
            doubt_ms = checkpoint_ms + checkpoint_lag_ms
        down = {"reason": "power_cut", "uncertain_ms": doubt_ms}
    next_seq = records[-1]["seq"] + 1
    return TakenUp(state, scene, unplayable, next_seq, last_ns, same_boot, was_running, down, notes)


def game_in(records, rules, start_ns):
    """The game a restart takes up from `records` (a `Game`), or None: the last game; or, if its
    `new_game` is lost (damaged) but later records are there, the game they play, opened by a
    stand-in (see `stand_in_opening`) under `rules`, with `start_ns` if its first record does not
    show its starting times."""
    game = last_game(records)
    played = [index for index, record in enumerate(records) if record["ev"] != "boot"]
    if game is not None or not played:
        return game
    start_ms = {side: ms(start_ns[side]) for side in SIDES}
    lead = records[: played[0]]
    opening = stand_in_opening(records, rules.name, start_ms)
    return Game([opening, *records[played[0] :]], lead=lead, opened_in=lead[-1] if lead else None)


def opening_note(first):
    """What a game whose `new_game` is lost was taken up with."""
    if not first.get("stand_in"):
        return []
    times = ", ".join(f"{side} {format_clock(first['time_ms'][side] // 1000)}" for side in SIDES)
    return [
        f"its opening (new_game) is damaged: played under this clock's rules ({first['rules']}), "
        f"starting times {times} as its first record shows them, its start in this boot unknown"
    ]
