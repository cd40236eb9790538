"""`tileclock hall-demo --director`: the scripted director plays a round on the page's own paths,
so its call answered, its correction, its round over and the next round's new games are on the
audit trail and sent with `by=hall-demo`, exactly as a director's clicks would be. (It sent no new
games, so every clock refused round 2; and it corrected an ended game, re-issuing its result.)"""

from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.audit_read import read
from tileclock.director.hall.round_control import RoundControl
from tileclock.director.pages.demo_director import BETWEEN_S, NEW_GAME_S, STEP_S, DemoDirector


class Feed:
    """Two boards heard, the first calling once `calling` is set; the commands sent."""

    def __init__(self, folder):
        self.sent = []
        self.calling = False
        self.store = type("Store", (), {"outdir": str(folder)})()

    def command(self, line, clock_id="all"):
        self.sent.append((clock_id, line))

    def snapshot(self):
        call = {"seq": 41, "state": "called"} if self.calling else None
        boards = [
            {"board": "1", "clock": "clock-1", "call": call, "state": "paused"},
            {"board": "2", "clock": "clock-2", "call": call, "state": "ended"},  # never corrected
        ]
        return {"boards": boards}


class Hall:
    def __init__(self, folder):
        self.feed = Feed(folder)
        self.audit = AuditLog(str(folder), clock=lambda: 1_764_100_000.5)
        self.rounds = RoundControl(self.feed, folder=str(folder))


def test_the_demo_director_plays_a_round_with_a_call_a_correction_and_round_over(tmp_path):
    hall = Hall(tmp_path)
    director = DemoDirector(hall, round_s=60)
    director.step(0)  # round 1 on every board
    hall.feed.calling = True
    for now in (1, 1 + STEP_S, 1 + 2 * STEP_S, 1 + 3 * STEP_S, 61, 61 + NEW_GAME_S, 61 + BETWEEN_S):
        director.step(now)
    lines = [line for _, line in hall.feed.sent]
    assert [line.split(" start=")[0] for line in lines] == [
        "set round=1",
        "set round=1",
        "call taken 41 by=hall-demo_t6as9s_2",
        "adjust B +60000 by=hall-demo_t6as9s_3",
        "call done 41 by=hall-demo_t6as9s_4",
        "round over by=hall-demo_t6as9s_5",
        # the next round's games first: a clock starts a round only on a fresh game
        "new game by=hall-demo_t6as9s_6",
        "new game by=hall-demo_t6as9s_6",
        "set round=2",
        "set round=2",
    ]
    # each action's id: who (`hall-demo`) and its line in audit.log
    assert [line.rsplit(" by=", 1)[1] for line in lines] == [
        f"hall-demo_t6as9s_{n}" for n in (1, 1, 2, 3, 4, 5, 6, 6, 7, 7)
    ]
    trail = [
        (e["action"], e["clock"], e["changed"].get("answer") or e["changed"].get("side"))
        for e in read(tmp_path)
    ]
    assert trail == [
        ("round_start", "all", None),
        ("call", "clock-1", "taken"),
        ("adjust", "clock-1", "B"),
        ("call", "clock-1", "done"),
        ("round_over", "all", None),
        ("new_game", "all", None),
        ("round_start", "all", None),
    ]
