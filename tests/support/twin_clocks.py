"""Two clocks under one id, c1: their games, the lines c1 makes playing one on a card of its own,
and a clock's lines as the director's files hold them."""

from support.collecting import lines_played
from tileclock.device.config_schema import Config
from tileclock.sim.simulator import Simulator


def game_lines(outdir, clock_id):
    """Every framed line in `clock_id`'s files under `outdir` (its games and what came before them)."""
    lines = []
    for folder in sorted(outdir.glob("board-*")):
        for path in sorted(folder.glob(f"*-{clock_id}.log")):
            lines += path.read_text().splitlines()
    return lines


X_GAME = "0 press B\n10 press A\n25 press B\n31 press A\n40 press STOP\n45 hold STOP 2.5\n48 press STOP\n"
Y_GAME = "0 press A\n3 press B\n7 press A\n12 press B\n20 press STOP\n22 hold STOP 2.5\n26 press STOP\n"


def journal_of(script, boot_id=None):
    """The framed lines clock c1 makes playing `script` on a journal of its own (a card); its boot
    id its own unless given (two clocks on one machine share the kernel's)."""
    return lines_played(Simulator(Config(clock_id="c1"), refresh_on_ticks=False, boot_id=boot_id), script)
