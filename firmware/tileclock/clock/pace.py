"""A game's pace: each side's turns pressed and its time used at its last press, taken record by
record. The director's page carries it on to a likely end (director/hall/ends.py), and the
clock's public state says it, so the spectators' page counts the same likely end (issue 41, point 4).
"""

SIDES = ("A", "B")


def fresh():
    """A game's pace before any press: {side: {"turns", "used_ms", "base_ms"}} (see `Pace`)."""
    return {side: {"turns": 0, "used_ms": 0, "base_ms": 0} for side in SIDES}


class Pace:
    """Each side's pace in one game, from its `new_game` on: `sides` is {side: {"turns": the
    turns it pressed (its switches), "used_ms": its time used at its last press, "base_ms": its
    time used before the first of them was counted, "last": whether it made the game's last
    press}}. A spare's game counts from its `takeover`: the time used on the dead clock is its
    base, and its turns there are not known."""

    def __init__(self):
        self.sides = fresh()

    def take(self, record):
        """Take one record of the game, in order (a `new_game` starts the pace again)."""
        ev = record.get("ev")
        if ev == "new_game":
            self.sides = fresh()
        elif ev == "takeover":
            for side in SIDES:
                used_ms = (record.get(side) or {}).get("used_ms", 0)
                self.sides[side] = {"turns": 0, "used_ms": used_ms, "base_ms": used_ms}
        elif (
            ev == "switch"
            and record.get("button") in self.sides
            and isinstance(record.get(record["button"]), dict)
        ):
            side = record["button"]
            done = self.sides[side]
            used_ms = record[side].get("used_ms", 0)
            self.sides[side] = {**done, "turns": done["turns"] + 1, "used_ms": used_ms}
            self.sides[side]["last"], self.sides["B" if side == "A" else "A"]["last"] = True, False
