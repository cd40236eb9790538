"""The hall's whole round end to end (issue 38, point 6): simulated clocks play round 3 through a
real mosquitto to a hall given `--tsh-dir`, both sides of each table enter their slip's scores on
the phones' form in Chromium, the hall queues each settled table into TSH's remote queue, the TSH
model (tests/support/tsh_model.py) runs the queue and rewrites its `.t` file, and the Scores page shows
each table "in TSH". The scores expected in the `.t` file are worked out here from the clocks' own
records (10 points per started minute over the clock's allotment), not by the project's code.
"""

import shutil

from conftest import BROKER_USERS
from support.hall_helpers import Stepping, hall_config, wait_for
from support.phones import PHONE
from support.tournament import TSH_FILES
from support.tsh_model import TshModel
from tileclock.device.config_schema import Config
from tileclock.sim.script import parse_script
from tileclock.sim.simulator import Simulator

# table: (clock, script, slip's score A, slip's score B); division A pairs #1-#4 and #3-#5 in round 3
GAMES = {
    # Anderson (A, first) runs 26:30: 1:30 over, two started minutes
    "1": ("c1", "0 send set round=3\n1 press B\n26:31 press A\n30:00 press STOP\n", 402, 380),
    # Evans (B) runs 25:20: 20 s over, one started minute
    "3": ("c2", "0 send set round=3\n1 press B\n20:00 press A\n45:20 press STOP\n", 420, 300),
}
END = "{t} hold STOP 2.5\n{t2} press STOP\n"


def _play(sim, text):
    """Run `text` (a sim script) on `sim`, its uplink handing each record to the broker as it goes."""
    script = parse_script(text)
    for t_ns, button, down in script.steps():
        if button == "send":
            sim.send(down, t_ns)
        else:
            sim.set_button(button, down, t_ns)
        sim.uplink.pump()
    sim.finish(script.end_ns)
    sim.uplink.pump()


def _overtime_penalties(records):
    """{side: points} from a game's records: the allotment its `new_game` gave, the time each side
    used at its `end`; 10 points for each minute begun past the allotment."""
    allotted = next(r for r in records if r["ev"] == "new_game")["time_ms"]
    end = next(r for r in records if r["ev"] == "end")
    penalties = {}
    for side in "AB":
        over_ms = end[side]["used_ms"] - allotted[side]
        penalties[side] = 10 * -(-over_ms // 60_000) if over_ms > 0 else 0
    return penalties


def test_a_round_from_the_clocks_through_the_phones_into_tsh_s_t_file(broker, browser, tmp_path):
    from tileclock.cli.hall import open_hall

    tsh = tmp_path / "tsh"
    tsh.mkdir()
    for path in TSH_FILES:
        shutil.copy(path, tsh)
    (tsh / "config.tsh").write_text(
        "config accept_remote_commands = 1\ndivision A a.t\ndivision B b.t\n", encoding="utf-8"
    )
    out = str(tmp_path / "hall")
    port = broker.tls_port or broker.port
    hall = open_hall(
        "127.0.0.1", port, BROKER_USERS["director"], out, "127.0.0.1:0",
        tls_ca=broker.ca_file, phones="127.0.0.1:0", tsh_dir=str(tsh),
    )  # fmt: skip  # as `tileclock hall --tsh-dir` opens it
    stepping = Stepping(hall.feed)
    sims = []
    try:
        wait_for(hall.feed.connection.connected.is_set, what="the hall to connect")
        want = {}
        for table, (clock, script, score_a, score_b) in GAMES.items():
            config = Config(clock_id=clock, board=table, rules="naspa", hall=hall_config(broker, clock))
            # no panel frames drawn between presses, as `tileclock sim --script` runs one
            sim = Simulator(config, refresh_on_ticks=False, state_dir=str(tmp_path / clock))
            sims.append(sim)
            _play(sim, script + END.format(t="50:00", t2="50:03.5"))
            records = sim.journal.records()
            penalties = _overtime_penalties(records)
            want[table] = (score_a - penalties["A"], score_b - penalties["B"])

            def delivered(sim=sim):
                sim.uplink.pump()
                return sim.uplink.acked == sim.journal.next_seq - 1

            wait_for(delivered, what=f"table {table}'s records to reach the broker")
        assert want == {"1": (382, 380), "3": (420, 290)}  # the clocks' records say so, as the rules do

        phones = hall.page.phone_address.rstrip("/")
        for table in GAMES:
            wait_for(
                lambda table=table: _refusal(hall, table) is None, what=f"table {table}'s end at the hall"
            )
            tokens = hall.scores.tokens_for(3, table)
            _, _, score_a, score_b = GAMES[table]
            for side in "AB":
                context = browser.new_context(**PHONE)
                page = context.new_page()
                page.goto(f"{phones}/S/{table}/{side}/{tokens[side]}")
                page.locator("#title").filter(has_text=f"Table {table}, round 3").wait_for()
                page.fill("#score_a", str(score_a))
                page.fill("#score_b", str(score_b))
                page.click("button[type=submit]")
                page.locator("#answer").filter(has_text="Entered").wait_for()
                if side == "B":
                    assert "Both sides agree" in page.inner_text("#answer")
                context.close()

        queue = hall.tsh_queue
        assert queue.step() == ""  # the hall's pass, called now rather than waited for (every 10 s)
        assert {queue.state(3)["tables"][f"table {t}"]["tsh"] for t in GAMES} == {"queued"}
        model = TshModel(str(tsh))
        model.run_queue()
        assert model.refused == []
        got = model.scores("A", 3)  # read back from a.t as TSH rewrote it
        assert got == {1: want["1"][0], 4: want["1"][1], 3: want["3"][0], 5: want["3"][1]}
        assert model.scores("B", 3) == {3: 50}  # Ito's bye, which TSH takes from the hall too
        ran = len(model.ran)
        assert ran == len(set(model.ran)) == 5  # each side's aps once, and the bye's

        queue.step()  # the .t file read back: TSH has them; a second pass queues nothing more
        model.run_queue()
        assert len(model.ran) == ran and model.refused == []

        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{hall.page.address.rstrip('/')}/scores")
        page.fill("#round", "3")
        page.click("#show")
        for table in GAMES:
            page.locator(f"tr[data-table='{table}']").filter(has_text="TSH: in TSH").wait_for()
        assert "TSH's queue" not in page.inner_text("#state")  # no failure of the queue shown
        context.close()
    finally:
        stepping.stop()
        for sim in sims:
            sim.close()
        hall.close()


def _refusal(hall, table):
    from tileclock.director.event.score_links import not_ended

    return not_ended(hall.feed.store, 3, table)
