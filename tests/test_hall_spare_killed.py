"""Issue 40's point 5 as a director meets it: a real `tileclock run` clock on a real mosquitto,
killed with SIGKILL mid-game, its game moved to a spare from the hall's page, both sides' times
the dead clock's journal's to the millisecond, the game ended on the spare and scored once; the
dead clock started again later is told its game moved, its late records kept apart."""

import csv
import os
import signal
import socket
import subprocess
import sys

import pytest

from conftest import BROKER_USERS, tap
from support.call_hall import Hall
from support.hall_helpers import closed_after, wait_for
from tileclock.clock.history import game_scene
from tileclock.director.hall.audit_read import read
from tileclock.director.records.gamefiles import load_games
from tileclock.director.records.history import iter_records

#: the dead clock's game, pressed by `tileclock run --script` at its own pace (the test waits on
#: what the hall hears, never on the time): round 3 at table 12, then B, A and B, A's clock running
GAME = "0.2 send set round=3 table=12\n0.5 press B\n0.9 press A\n1.3 press B\n600 until\n"


class DeadClock:
    """Clock c1 as a child process, `tileclock run --simulate`, on the hall's broker: its journal
    on disk in `tmp_path/c1`, its readiness heard on a notify socket as systemd hears it."""

    def __init__(self, broker, tmp_path):
        self.state = tmp_path / "c1"
        config = tmp_path / "c1.toml"
        # TLS as the hall's clocks use it; no checkpoint in the test's few seconds: the hall's copy
        # of the game ends at the journal's last record, so the spare's times can equal it
        config.write_text(
            f'[clock]\nid = "c1"\ncheckpoint_s = 600\n[serial]\nport = "loop://"\n'
            f'[hall]\nbroker = "127.0.0.1"\nport = {broker.tls_port or broker.port}\n'
            f'password = "{BROKER_USERS["c1"]}"\nkeepalive_s = 5\n'
            + (f'tls_ca = "{broker.ca_file}"\n' if broker.tls_port else "")
        )
        self.command = [sys.executable, "-m", "tileclock", "run", "--simulate", "--config", str(config)]
        self.command += ["--state-dir", str(self.state)]
        (tmp_path / "run").mkdir()  # systemd's RuntimeDirectory: the restart is in the same boot
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(tmp_path / "notify"))
        self.notify.settimeout(30)
        self.env = dict(
            os.environ, NOTIFY_SOCKET=str(tmp_path / "notify"), RUNTIME_DIRECTORY=str(tmp_path / "run")
        )
        self.process = None

    def start(self, *options):
        """Start the clock (`options`: `--script FILE --stay`) and wait for its READY=1."""
        self.process = subprocess.Popen([*self.command, *options], stderr=subprocess.DEVNULL, env=self.env)
        while not self.notify.recv(256).startswith(b"READY=1"):
            pass

    def kill(self):
        """SIGKILL, as a power cut: no `offline`, no last save, nothing more journaled."""
        self.process.send_signal(signal.SIGKILL)
        assert self.process.wait(10) == -signal.SIGKILL

    def records(self):
        """Its journal as it is on disk (read-only: never the clock's start-up)."""
        return list(iter_records(str(self.state / "journal")))

    def close(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.notify.close()


@pytest.fixture
def hall(broker, tmp_path):
    """The hall with c2 (the spare) simulated in this process, and c1 a `tileclock run` process."""
    hall = Hall(broker, tmp_path, ids=("c2",))
    hall.dead = DeadClock(broker, tmp_path)
    try:
        yield from closed_after(hall)
    finally:
        hall.dead.close()


def events(records, name):
    return [r for r in records if r["ev"] == name]


def test_a_clock_killed_mid_game_is_taken_up_by_a_spare_exact_to_the_ms_and_scored_once(hall, tmp_path):
    clocks, dead = hall.clocks, hall.dead
    clocks.end_game("c2")  # c2 is the spare: its game over, a fresh one open
    clocks.open_game("c2")
    clocks.pump()
    wait_for(lambda: hall.board("c2")["state"] == "ready", what="the spare's fresh game on the page")
    script = tmp_path / "game.txt"
    script.write_text(GAME)
    dead.start("--script", str(script), "--stay")

    def heard():
        game = hall.page.game("c1")
        return game.records if game is not None else []

    wait_for(lambda: len(events(heard(), "switch")) == 2, what="c1's presses on the page")
    dead.kill()  # mid-game, A's clock running
    journal = dead.records()
    last = journal[-1]
    assert (last["ev"], last["run"]) == ("switch", "A")
    assert heard()[-1]["seq"] == last["seq"]  # the hall heard every record c1 journaled

    status, answer = hall.post("/api/board/c1/move", {"to": "c2"})  # the page's move button's path
    assert status == 200, answer
    wait_for(lambda: events(hall.clock_records("c2"), "takeover"), what="the spare's takeover")
    (taken,) = events(hall.clock_records("c2"), "takeover")
    assert (taken["from"], taken["from_seq"], taken["state"], taken["run"]) == (
        "c1",
        last["seq"],
        "paused",
        None,
    )
    for side in "AB":  # time used, shown and penalty: the dead clock's journal's, to the ms
        assert taken[side] == last[side], side
    assert all(last[side]["used_ms"] > 0 for side in "AB")
    (move,) = [e for e in read(hall.folder) if e["action"] == "move"]
    assert (move["clock"], move["changed"]["from"], taken["by"]) == ("c2", "c1", move["id"])

    # the spare plays the game to its end: A's press runs B's clock, then the game is ended
    tap(clocks.sims["c2"], "A", clocks.t["c2"] + 2)
    clocks.t["c2"] += 7
    clocks.end_game("c2")
    clocks.pump()
    wait_for(lambda: len(rows(hall)) == 2, what="the spare's first game and the moved one in results.csv")
    (row,) = [r for r in rows(hall) if r["table"] == "12"]
    ended = events(hall.clock_records("c2"), "end")[-1]  # (the spare's first game ended too)
    spare = max(r["seq"] for r in events(hall.clock_records("c2"), "new_game") if r["seq"] < taken["seq"])
    assert (row["clock"], row["round"], int(row["game_seq"])) == ("c2", "3", spare)
    assert int(row["A_used_ms"]) == last["A"]["used_ms"]  # A never ran on the spare
    assert int(row["B_used_ms"]) == ended["B"]["used_ms"] > last["B"]["used_ms"]
    # the sheet and `tileclock scores` read the folder's games: table 12 is one game, the spare's
    found, _ = load_games([str(hall.folder)])
    assert [(g.first["clock"], g.seq) for _, g, _ in found if game_scene(g.records)["table"] == "12"] == [
        ("c2", spare)
    ]

    # the dead clock started again later: it takes its game up from its journal, is heard, and
    # is told the game moved; what it sends from then on is kept apart and counted nowhere
    dead.start()
    moved = next(r for r in journal if r["ev"] == "new_game")["seq"]
    assert taken["from_game"] == moved
    wait_for(lambda: (clocks.pump(), events(dead.records(), "moved"))[-1], what="c1 told its game moved")
    (told,) = events(dead.records(), "moved")
    assert (told["game_seq"], told["to"], told["state"], told["run"]) == (moved, "c2", "ended", None)
    # (its own copy ran A's clock on to its restart: the time lost is the director's to give back)
    assert told["B"]["used_ms"] == last["B"]["used_ms"] and told["A"]["used_ms"] > last["A"]["used_ms"]
    (line,) = [e for e in read(hall.folder) if e["action"] == "moved"]
    assert (line["by"], line["clock"], told["by"]) == ("hall", "c1", line["id"])
    wait_for(lambda: (hall.board("c1") or {}).get("moved"), what="the page to show c1's game moved")
    (game_file,) = hall.folder.glob(f"board-*/game-{moved}-c1.log")
    assert [r["seq"] for r in iter_records(str(game_file))][-1] == last["seq"]  # ends at the takeover
    later = game_file.parent / f"after-move-{moved}-c1.log"
    wait_for(
        lambda: later.exists() and told["seq"] in [r["seq"] for r in iter_records(str(later))],
        what="c1's late records on file, apart",
    )
    apart = list(iter_records(str(later)))
    assert all(r["seq"] > last["seq"] for r in apart) and {"recovered", "moved"} <= {r["ev"] for r in apart}
    assert [r["clock"] for r in rows(hall) if r["table"] == "12"] == ["c2"]  # not counted twice
    assert not [r for r in rows(hall) if r["clock"] == "c1"]
    assert not events(hall.clock_records("c2"), "adjust")  # nor any time changed on the spare
    dead.process.send_signal(signal.SIGTERM)
    assert dead.process.wait(10) == 0


def rows(hall):
    path = hall.folder / "results.csv"
    if not path.exists():
        return []
    with open(path, newline="") as file:
        return list(csv.DictReader(file))
