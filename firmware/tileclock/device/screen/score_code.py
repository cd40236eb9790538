"""The hall's score link of the game, held on the clock, and which panels show it as a QR code.

The hall sends `code GAME BASE TOKEN_A TOKEN_B` (wire/protocol.py) once the game has ended: the
link of side S is `BASE/S/TOKEN_S`, and it opens the hall page's score form of this table's game
for side S alone on a phone; each panel shows its own side's link (a phone that reads A's panel
cannot enter as B). The
link is kept here, in memory only: it is never journaled nor sent back in a record, so the
token stays between the hall and this clock's panels (a spectator reading the records cannot
enter a score). It is for the one game it names, and goes with that game's end (a new game, a
reopen): a restart forgets it, and the hall sends it again (docs/hall.md).

Which panel shows it is the players' gesture (docs/player-guide.md): on an ended game, a press of a
side's own button, which the clock records as `ignored` (`ended`) and otherwise ignores, turns its
panel from the final screen to the code and back. The final screen always comes first.
"""

from dataclasses import replace

from ...wire.records import SIDES


class ScoreCode:
    """The score link of the current game (or None) and the sides whose panel shows it."""

    def __init__(self):
        self.game = None  # the seq of the game the link is for
        self.link = None  # (base, (token A, token B))
        self.shown = set()
        self.changed = False  # a link taken since the panels were last drawn

    def take(self, game_seq, base, tokens):
        """Hold the links the hall sent for game `game_seq` (`tokens`: side A's and side B's; the
        caller has checked it is this game)."""
        link = (base, tuple(tokens))
        if (game_seq, link) != (self.game, self.link):
            self.shown.clear()  # a new link: each panel shows the final screen first again
        self.game, self.link = game_seq, link
        self.changed = True

    def note(self, record):
        """Follow the clock's records: a side's press on the ended game turns its panel; a new game
        or a reopened one drops the link (and the code)."""
        if record.ev in ("new_game", "reopen"):
            self.game, self.link = None, None
            self.shown.clear()
        elif record.ev == "ignored" and self.link is not None:
            side = record.extra.get("button")
            if record.extra.get("reason") == "ended" and side in SIDES:
                self.shown ^= {side}

    def on(self, view):
        """`view` with the link and the panels showing it (unchanged when no link is held)."""
        self.changed = False  # drawn now
        if self.link is None:
            return view
        return replace(view, score_link=self.link, code=tuple(sorted(self.shown)))
