"""The director's tools through real pseudo-terminals: collect, export, replay."""

import csv
import json
import os
import select

import pytest

from conftest import tap
from support.cable import Cable, Plug
from support.collecting import GAME, FakeClock, journal_of, poll_until
from support.hall_helpers import wait_for
from tileclock.cli import main
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.director.follow.collect import ClockFeed, snapshot
from tileclock.director.follow.store import RecordStore
from tileclock.director.follow.table import screen_lines
from tileclock.director.records.history import read_records
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe, with_crc

S = NS_PER_S


def game_files(outdir, board="1"):
    """A board's game files, by name without the clock id (`game-SEQ.log`), and the clock ids."""
    folder = os.path.join(outdir, f"board-{board}")
    files, clocks = {}, set()
    for name in sorted(os.listdir(folder)):
        stem, _, clock = name.removesuffix(".log").rpartition("-")
        files[stem + ".log"] = open(os.path.join(folder, name)).read().splitlines()
        clocks.add(clock)
    assert len(clocks) == 1, clocks
    return files


def test_every_record_arrives_once_in_order_despite_corruption_duplicates_and_gaps(tmp_path):
    lines = journal_of()
    plug = Plug(str(tmp_path), "ttyUSB0")
    clock = FakeClock()
    feed = ClockFeed(plug.path, str(tmp_path / "out"), clock)
    feed.poll()
    assert plug.read_lines(1) == ["status"]  # first it asks where the clock is
    damaged = lines[3][:20] + "X" + lines[3][21:]
    sent = [lines[0], lines[1], lines[1], damaged, lines[4], lines[2], lines[6]] + lines[7:]
    plug.write("".join(line + "\n" for line in sent) + "\x00\xff noise\n")
    requests, acks = [], []

    def answer(request):
        if request.startswith("ack ") and request == with_crc(request.partition("*")[0]):
            acks.append(int(request.split()[1].partition("*")[0]))
        if not request.startswith("resend"):
            return  # a status asked again: the boot record told the collector the clock (re)started
        requests.append(request)
        first, last = map(int, request.split()[1:])
        clock.now += 3  # time for the collector to ask again if it must
        plug.write("".join(lines[seq] + "\n" for seq in range(first, last + 1)))

    poll_until(feed, lambda: feed.expected == len(lines), plug, answer)
    assert requests[0] == "resend 3 3"  # line 3 was damaged; 5 went missing too
    assert "resend 5 5" in requests
    assert feed.bad_lines == 2 and feed.duplicates >= 1
    files = game_files(str(tmp_path / "out"))
    assert list(files) == ["game-1.log"]
    assert files["game-1.log"] == lines  # the boot record opens the file of the game after it
    results = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert len(results) == 1 and results[0]["board"] == "1" and results[0]["end_reason"] == "stop_hold"
    end = next(unframe(line)["seq"] for line in lines if unframe(line)["ev"] == "end")
    assert acks and acks[0] >= end  # the game is on file: the clock may prune it
    assert results[0]["A_used_ms"] == "15000" and results[0]["B_turns"] == "1"
    feed.close()
    plug.pull()


def test_two_clocks_at_once_each_to_its_own_files(tmp_path):
    plugs = [Plug(str(tmp_path), f"ttyUSB{n}") for n in (0, 1)]
    lines = {"7": journal_of(board="7"), "8": journal_of(GAME.replace("10 press A", "12 press A"), board="8")}
    store = RecordStore(str(tmp_path / "out"))
    feeds = [ClockFeed(plug.path, store) for plug in plugs]
    for feed, plug, board in zip(feeds, plugs, ("7", "8"), strict=True):
        feed.poll()
        plug.drain(0.01)
        plug.write("".join(line + "\n" for line in lines[board]))
    for feed, board in zip(feeds, ("7", "8"), strict=True):
        poll_until(feed, lambda feed=feed, board=board: feed.expected == len(lines[board]))
    for board in ("7", "8"):
        assert game_files(str(tmp_path / "out"), board)["game-1.log"] == lines[board]
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert sorted((r["board"], r["A_used_ms"]) for r in rows) == [("7", "15000"), ("8", "17000")]
    table = screen_lines(snapshot(feeds, store))
    for board, plug in (("7", plugs[0]), ("8", plugs[1])):
        row = next(line for line in table if line.split()[0] == board)
        assert "ended" in row and row.endswith(plug.path)
    for feed, plug in zip(feeds, plugs, strict=True):
        feed.close()
        plug.pull()


def test_a_cable_pulled_mid_game_and_put_back_loses_nothing(tmp_path):
    cable = Cable(str(tmp_path))
    sim = Simulator(Config(), serial_url=cable.a.path)
    director_time = FakeClock()
    feed = ClockFeed(cable.b.path, str(tmp_path / "out"), director_time)

    def serve(t_s, done):
        """Let the collector and the clock talk (at the clock's `t_s`) until `done()`: the pty
        delivers when the machine gets to it, so a count of rounds was a race on a busy one."""

        def talk():
            if feed.fileno() is not None:
                select.select([feed.fileno()], [], [], 0.02)
            feed.poll()
            sim.daemon.pump(int(t_s * S))
            return done()

        wait_for(talk, what="the collector and the clock to agree")

    tap(sim, "B", 0)
    serve(1, lambda: feed.expected == 3)  # boot, new_game, start (the answer to its status is no record)
    cable.pull()
    tap(sim, "A", 10)  # records made while the cable is out
    tap(sim, "B", 20)
    sim.run_to(25 * S)
    feed.poll()
    assert feed.down
    cable.replug()
    sim.run_to(27 * S)  # the clock's link opens again
    director_time.now += 1.0  # the collector tries its port again a second after it failed
    serve(28, lambda: feed.down is None and not feed.pending and feed.expected == sim.journal.next_seq)
    assert feed.down is None and not feed.pending
    assert feed.expected == sim.journal.next_seq
    written = game_files(str(tmp_path / "out"))["game-1.log"]
    assert written == sim.journal.lines  # every record exactly once, in order
    sim.close()
    feed.close()
    cable.pull()


@pytest.fixture
def recorded(tmp_path):
    path = str(tmp_path / "state")
    # a first game, ended; then a second one (new game at 47.5 s; A's clock runs from 50 s)
    journal_of(GAME + "45 hold STOP 2.5\n50 press B\n27:00 press A\n27:10 press STOP\n", path=path)
    return path


def test_export_writes_csv_and_json_to_a_folder(recorded, tmp_path, capsys):
    out = tmp_path / "usb"
    assert main(["export", "--journal", recorded, str(out), "--no-pictures"]) == 0
    assert sorted(os.listdir(out)) == ["game-1.json", "game-7.json", "games.csv"]
    rows = list(csv.DictReader(open(out / "games.csv")))
    assert [r["end_reason"] for r in rows] == ["stop_hold", "not ended"]
    game = json.load(open(out / "game-7.json"))[0]
    assert game["game_seq"] == 7 and game["records"][0]["ev"] == "new_game"
    assert main(["export", "--journal", recorded, "--game", "7", str(tmp_path / "one.csv")]) == 0
    assert len(list(csv.DictReader(open(tmp_path / "one.csv")))) == 1
    assert main(["export", "--journal", recorded, "--game", "5", str(tmp_path / "x.csv")]) == 2
    assert "no game starts at seq 5" in capsys.readouterr().err


def test_export_gives_an_unfinished_game_the_round_and_table_set_for_it_never_the_next_ones(sim, tmp_path):
    """A `set` before anyone pressed is for this game (`applies: this`), one while it runs for the
    next (docs/protocol.md, "The time of day, the round and the table"): a game still under way is
    exported with its own round and table."""
    records = sim("0 send set round=3 table=5\n1 press B\n2:00 send set round=4 table=6\n3:00 press A\n")
    assert [(r["round"], r["applies"]) for r in records if r["ev"] == "set"] == [(3, "this"), (4, "next")]
    path = tmp_path / "journal.log"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert main(["export", "--journal", str(path), str(tmp_path / "games.csv")]) == 0
    (row,) = csv.DictReader(open(tmp_path / "games.csv"))
    assert (row["end_reason"], row["round"], row["table"]) == ("not ended", "3", "5")


def test_replay_shows_what_the_screens_showed_at_any_instant(recorded, capsys, tmp_path):
    assert main(["replay", recorded, "--at", "25:20.5", "--png", str(tmp_path / "then.png")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()  # the last game: A has run 25:18 of it
    assert lines[1].split()[:2] == ["A:", "-0:18"] and "penalty  10" in lines[1] and "running" in lines[1]
    assert lines[2].split()[:2] == ["B:", "25:00"] and "penalty   0" in lines[2]
    assert os.path.exists(tmp_path / "then.png")


def test_replay_settles_a_clock_started_in_error_after_the_out_play(tmp_path, capsys):
    """NSA 1997 VII.J.2: A went out at 25:10 of its time, then B's clock was started by mistake
    and ran on into overtime; the director reads the penalties as of the out play."""
    path = str(tmp_path / "state")
    journal_of("0 press B\n1510 press A\n1600 press STOP\n", path=path)
    records = read_records(path)
    out_play = next(r for r in records if r["ev"] == "switch")
    assert main(["replay", path, "--after-seq", str(out_play["seq"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["A:", "-0:10"] and "penalty  10" in lines[1]
    assert main(["replay", path, "--at", "26:40"]) == 0
    later = capsys.readouterr().out.splitlines()
    assert later[2].split()[:2] == ["B:", "23:30"]


def test_export_takes_the_state_dir_by_the_name_run_and_doctor_use_and_by_its_old_name(
    recorded, tmp_path, capsys
):
    for option in ("--state-dir", "--journal"):
        assert main(["export", option, recorded, str(tmp_path / f"{option[2:]}.csv")]) == 0
    assert (tmp_path / "state-dir.csv").read_text() == (tmp_path / "journal.csv").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    assert "--state-dir DIR, --journal DIR" in capsys.readouterr().out


def test_the_live_table_ticks_between_records_as_the_clock_does(tmp_path):
    from tileclock.director.follow.collect import note_heard
    from tileclock.director.follow.table import ticking

    # whole seconds off at each second boundary of the side's used time, into overtime too
    assert ticking("24:50", 10_400, 500) == "24:50"
    assert ticking("24:50", 10_400, 600) == "24:49"
    assert ticking("0:00", 1_500_000, 1_000) == "-0:01"
    assert ticking("-0:41", 1_541_000, 2_000) == "-0:43"
    assert ticking("25:00", 0, 0) == "25:00" and ticking("?", 0, 5_000) == "?"

    store = RecordStore(str(tmp_path / "out"))
    lines = journal_of("0 press B\n10 press A\n")  # A's clock runs from 10 s: B's press at 0 ran A...
    for line in lines:
        store.add(unframe(line), line)
    heard = {}
    assert note_heard(store, heard, 100.0) is True  # a clock runs: the table redraws each second
    (row,) = snapshot([], store, heard, 100.0).rows
    last = store.clocks[row.clock_id].last
    running = last["run"]
    before = last[running]["shown"]
    (later,) = snapshot([], store, heard, 103.0).rows
    assert f"*{running} {ticking(before, last[running]['used_ms'], 3000):>7}" in later.sides
    assert ticking(before, last[running]["used_ms"], 3000) != before
    assert note_heard(store, heard, 103.0) and heard[row.clock_id][1] == 100.0  # the same record
    assert "playing" in screen_lines(snapshot([], store, heard, 103.0))[1]
