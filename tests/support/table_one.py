"""Table 1 of round 3 on the director's page: its game, its two players as the page names them,
and a stand-in feed with that one board."""

from types import SimpleNamespace

from support.feeds import Feed

#: A presses first, so B's clock runs first: B moved first (in round 3 of a.t, table 1 is Anderson
#: (#1, p12 1: she goes first) against Diaz (#4)); then the game ends
GAME = "0 press A\n5 press B\n10 press STOP\n11 hold STOP 2.5\n14 press STOP\n"
ANN, DAN = "Anderson, Ann (#1, A)", "Diaz, Dan (#4, A)"


class BoardFeed(Feed):
    """The hall's feed with one board, table 1, whose clock's game is `game`."""

    def __init__(self, game):
        super().__init__()
        self.store = SimpleNamespace(
            log_of=lambda clock: SimpleNamespace(game=game), outdir=self.store.outdir
        )

    def snapshot(self):
        return {**super().snapshot(), "boards": [{"board": "1", "clock": "c1"}]}
