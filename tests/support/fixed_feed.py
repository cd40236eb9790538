"""The hall's feed fixed: a page's whole input is the boards it is given, each made by `board`."""

import time

#: the page's clock (ms since 1970): the running sides tick from here, so it stays put
NOW_MS = 1_764_079_200_000


class Feed:
    """The hall's feed, fixed: the page's whole input is `boards` (test_hall_page_look's `HALL`)."""

    version = 1

    def __init__(self, boards):
        self.boards = boards

    def snapshot(self):
        return {"version": 1, "connected": True, "down": None, "alerts": [], "boards": self.boards}

    def wait_for_change(self, version, timeout_s):
        time.sleep(min(timeout_s, 0.05))
        return self.version


def side(shown, used_ms, pen=0):
    return {"used_ms": used_ms, "shown": shown, "pen": pen}


def board(n, state, run=None, a=("25:00", 0), b=("25:00", 0), **more):
    made = {
        "clock": f"clock-{n}",
        "board": str(n),
        "round": 3,
        "table": str(n),
        "online": True,
        "state": state,
        "run": run,
        "ev": "switch",
        "seq": 40 + n,
        "A": side(*a),
        "B": side(*b),
        "faults": {},
        "age_ms": 1500,
        "waiting": 0,
        "refused": 0,
        "attention": 2,
        "time": {"offset_us": 180, "error_us": 420, "synced": True},
        "took_start": NOW_MS - 600_000,  # the round's start (ROUND's): each game took it
    }
    made.update(more)
    return made
