"""The director's collector cannot be fooled: clocks are kept apart by id, and no line from a
clock (a hostile board name, a record with good integrity but bad fields) can make it write
outside its folder, put a formula in a spreadsheet, crash, or merge or drop anything."""

import csv
import json
import os
import select
import threading

import pytest

from support.cable import Cable, Plug
from support.collecting import GAME, journal_of
from support.hall_helpers import wait_for
from tileclock.cli import main
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.director.follow.collect import ClockFeed, scene_hello, snapshot
from tileclock.director.follow.store import RecordStore
from tileclock.director.follow.table import screen_lines
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import frame, unframe


def reframed(line, change):
    """`line` with its record changed by `change(dict)`, and a good integrity field again."""
    record = unframe(line)
    change(record)
    return frame(json.dumps(record, separators=(",", ":")))


def serve(feeds, done, rounds=300):
    """Poll the feeds (waiting on their ports, never sleeping) until `done()`."""
    for _ in range(rounds):
        fds = [feed.fileno() for feed in feeds if feed.fileno() is not None]
        select.select(fds, [], [], 0.02)
        for feed in feeds:
            feed.poll()
        if done():
            return
    raise AssertionError("the collector did not get there")


def send(plug, lines):
    plug.write("".join(line + "\n" for line in lines))


def results(out):
    return list(csv.DictReader(open(os.path.join(out, "results.csv"))))


def test_two_clocks_with_one_board_name_are_kept_apart_and_the_director_is_told(tmp_path):
    out = str(tmp_path / "out")
    plugs = [Plug(str(tmp_path), f"ttyUSB{n}") for n in (0, 1)]
    first, second = journal_of(board="3"), journal_of(GAME.replace("10 press A", "12 press A"), "3")
    store = RecordStore(out)
    feeds = [ClockFeed(plug.path, store) for plug in plugs]
    for feed, plug, lines in zip(feeds, plugs, (first, second), strict=True):
        feed.poll()
        send(plug, lines)
    serve(feeds, lambda: all(feed.expected == len(first) for feed in feeds))
    ids = [unframe(lines[0])["clock"] for lines in (first, second)]
    files = sorted(os.listdir(os.path.join(out, "board-3")))
    assert files == sorted(f"game-1-{clock}.log" for clock in ids)
    for lines, clock in zip((first, second), ids, strict=True):
        assert open(os.path.join(out, "board-3", f"game-1-{clock}.log")).read().splitlines() == lines
    rows = results(out)
    assert sorted((r["clock"], r["A_used_ms"]) for r in rows) == sorted(
        zip(ids, ("15000", "17000"), strict=True)
    )
    said = [text for _, text in store.notices]
    assert any("board 3: claimed by clocks" in text and all(c in text for c in ids) for text in said)
    assert any("claimed by" in line for line in screen_lines(snapshot(feeds, store)))
    for plug in plugs:
        plug.pull()


def test_a_clock_swapped_onto_another_clocks_port_is_a_new_clock_not_duplicates(tmp_path):
    out = str(tmp_path / "out")
    plug = Plug(str(tmp_path), "ttyUSB0")
    first, second = journal_of(board="5"), journal_of(board="6")
    store = RecordStore(out)
    feed = ClockFeed(plug.path, store)
    feed.poll()
    send(plug, first)
    serve([feed], lambda: feed.expected == len(first))
    send(plug, second)  # the cable moved to another clock; the port never closed
    serve(
        [feed], lambda: feed.current.clock_id == unframe(second[0])["clock"] and feed.expected == len(second)
    )
    assert feed.duplicates == 0
    assert [r["board"] for r in results(out)] == ["5", "6"]
    assert any(f"port {plug.path}: now clock" in text for _, text in store.notices)
    plug.pull()


@pytest.mark.parametrize(
    "board",
    ["x/../../../../escaped", "../../etc", '=HYPERLINK("http://evil","x")', "+1+1", "@SUM(A1)", "-2+3"],
)
def test_a_hostile_board_name_never_writes_outside_the_folder_or_makes_a_formula(tmp_path, board):
    out = tmp_path / "deep" / "out"
    plug = Plug(str(tmp_path), "ttyUSB0")
    lines = journal_of(board=board)
    feed = ClockFeed(plug.path, str(out))
    feed.poll()
    send(plug, lines)
    serve([feed], lambda: feed.expected == len(lines))
    everything = {
        os.path.relpath(os.path.join(folder, name), tmp_path)
        for folder, _, names in os.walk(tmp_path)
        for name in names
    }
    assert all(path.startswith("deep/out/") or path.startswith("ttyUSB0") for path in everything), everything
    assert os.listdir(out / "board-unnamed") == [f"game-1-{feed.current.clock_id}.log"]
    with open(out / "results.csv") as file:
        cells = [cell for row in csv.reader(file) for cell in row]
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells)
    assert not any(cell.startswith("-") and ":" not in cell for cell in cells)  # only times like -1:23
    assert any("is not a label" in text for _, text in feed.store.notices)
    plug.pull()


BAD_FIELDS = {
    "no ev": lambda r: r.pop("ev"),
    "t_ms as text": lambda r: r.update(t_ms="12"),
    "no run": lambda r: r.pop("run"),
    "A not a side": lambda r: r.update(A=[1, 2]),
    "shown not a time": lambda r: r["B"].update(shown="\x1b[2J"),
    "state unknown": lambda r: r.update(state="exploded"),
    "pen as float": lambda r: r["A"].update(pen=1.5),
}


@pytest.mark.parametrize("what", sorted(BAD_FIELDS))
def test_a_record_with_good_integrity_but_bad_fields_is_kept_aside_and_nothing_else_changes(tmp_path, what):
    out = tmp_path / "out"
    plug = Plug(str(tmp_path), "ttyUSB0")
    lines = journal_of(board="4")
    bad = 3
    sent = lines[:bad] + [reframed(lines[bad], BAD_FIELDS[what])] + lines[bad + 1 :]
    feed = ClockFeed(plug.path, str(out))
    feed.poll()
    plug.drain(0.01)
    send(plug, sent)
    serve([feed], lambda: feed.expected == len(lines))
    assert feed.store.rejects == 1 and not feed.pending
    rejected = [json.loads(line) for line in open(out / "rejects.log")]
    assert [(r["from"], r["line"]) for r in rejected] == [(plug.path, sent[bad])] and rejected[0]["reason"]
    written = open(out / "board-4" / f"game-1-{feed.current.clock_id}.log").read().splitlines()
    assert written == lines[:bad] + lines[bad + 1 :]
    assert not [ask for ask in plug.drain(0.05) if ask.startswith("resend")]  # not asked for again
    plug.pull()


SUMMARY_DAMAGE = {
    "no summary": lambda r: r.pop("summary"),
    "summary not a dict": lambda r: r.update(summary="x"),
    "a side missing": lambda r: r["summary"].pop("A"),
    "turns as text": lambda r: r["summary"]["B"].update(turns="3"),
    "a bad correction": lambda r: r["summary"].update(corrections=[{"player": "C"}]),
    "clock id not a label": lambda r: r.update(clock="../x"),
    "seq negative": lambda r: r.update(seq=-4),
}


@pytest.mark.parametrize("what", sorted(SUMMARY_DAMAGE))
def test_a_damaged_end_record_never_crashes_the_collector(tmp_path, what):
    out = tmp_path / "out"
    plug = Plug(str(tmp_path), "ttyUSB0")
    lines = journal_of(board="4")
    end = next(n for n, line in enumerate(lines) if unframe(line)["ev"] == "end")
    feed = ClockFeed(plug.path, str(out))
    feed.poll()
    plug.drain(0.01)
    send(plug, lines[:end] + [reframed(lines[end], SUMMARY_DAMAGE[what])] + lines[end + 1 :])
    serve([feed], lambda: feed.store.rejects == 1 and feed.expected >= end)
    assert not os.path.exists(out / "results.csv")  # no row from a summary that cannot be read
    assert json.loads(open(out / "rejects.log").read())["from"] == plug.path
    plug.pull()


WALL_S = 1_717_430_400.5


def test_the_collector_tells_each_clock_the_scene_on_connecting_and_after_a_power_cut(tmp_path):
    cable = Cable(str(tmp_path))
    state = str(tmp_path / "state")
    hello = scene_hello(5, {cable.b.path: "T-7"}, wall_clock=lambda: WALL_S)
    feed = ClockFeed(cable.b.path, str(tmp_path / "out"), hello=hello)
    sim = Simulator(Config(), serial_url=cable.a.path, state_dir=state)

    def talk(sim, t_s, done, what):
        """The line carries both ways (a relay thread: as slow as a loaded machine makes it) until `done()`."""

        def step():
            if feed.fileno() is not None:
                select.select([feed.fileno()], [], [], 0.02)
            feed.poll()
            sim.daemon.pump(int(t_s * 10**9))
            return done()

        wait_for(step, what=what)

    def heard(sim, after=0):
        """Whether the clock has taken a `set` after its `after`-th record, and the feed holds all it sent."""
        kinds = [unframe(line)["ev"] for line in sim.journal.lines]
        told = "set" in kinds[after:]
        return told and not feed.pending and feed.expected == sim.journal.next_seq

    talk(sim, 1, lambda: heard(sim), "the scene taken and the records heard")
    # the scene goes out when the port opens and again when the clock is heard booting; whether the
    # first copy outlives the clock's own port opening is up to the line, so one or two may land
    scene = [unframe(line) for line in sim.journal.lines if '"ev":"set"' in line]
    assert 1 <= len(scene) <= 2
    assert {(r["wall_ms"], r["round"], r["table"], r["applies"]) for r in scene} == {
        (1_717_430_400_500, 5, "T-7", "this")
    }
    sim.close()
    again = Simulator(Config(), serial_url=cable.a.path, state_dir=state, time=VirtualTime(0))  # power cut
    talk(again, 1, lambda: heard(again, after=len(sim.journal.lines)), "the scene told again after the cut")
    kinds = [unframe(line)["ev"] for line in again.journal.lines]
    second_boot = kinds.index("boot", 1)
    assert kinds.count("boot") == 2 and "set" in kinds[second_boot:]  # told again after the power cut
    assert not feed.pending and feed.expected == again.journal.next_seq
    again.close()
    cable.pull()


@pytest.mark.parametrize("line", ["/dev/ttyUSB0 ../x", "/dev/ttyUSB0", "=1 =SUM(A1)"])
def test_a_bad_tables_file_is_refused_by_line(tmp_path, capsys, line):
    tables = tmp_path / "tables.txt"
    tables.write_text(f"# port table\n/dev/ttyUSB1 3\n{line}\n")
    assert main(["collect", "/dev/ttyUSB1", "--tables", str(tables), "--out", str(tmp_path)]) == 2
    assert f"{tables}, line 3" in capsys.readouterr().err


def test_a_line_flipping_between_clocks_cannot_flood_the_notices(tmp_path, monkeypatch):
    monkeypatch.setattr("tileclock.director.follow.store.MAX_SIDE_FILE_BYTES", 4000)
    out = tmp_path / "out"
    plug = Plug(str(tmp_path), "ttyUSB0")
    lines = journal_of(board="4")
    flipping = [
        reframed(line, lambda r, n=n: r.update(clock=f"x{n % 2}")) for n, line in enumerate(lines * 20)
    ]
    feed = ClockFeed(plug.path, str(out))
    feed.poll()
    writer = threading.Thread(target=send, args=(plug, flipping))  # more than the line holds at once
    writer.start()

    def seen():
        return sum(log.duplicates + log.written + len(log.pending) for log in feed.store.clocks.values())

    serve([feed], lambda: seen() >= len(flipping), rounds=3000)
    writer.join()
    assert os.path.getsize(out / "notices.log") <= 4000 and len(feed.store.notices) <= 100
    assert sum("now clock" in text for _, text in feed.store.notices) >= 50  # said, however often
    plug.pull()


def test_two_clocks_with_one_id_on_two_ports_at_once_are_loud_and_kept_apart(tmp_path):
    """Two cards given one `[clock] id`, both on, each on its own port, their records by turns:
    nothing dropped, each clock's games in files of their own, and the director told."""
    from support.twin_clocks import X_GAME, Y_GAME, game_lines
    from support.twin_clocks import journal_of as c1_journal

    out = tmp_path / "out"
    plugs = [Plug(str(tmp_path), f"ttyUSB{n}") for n in (0, 1)]
    first, second = c1_journal(X_GAME), c1_journal(Y_GAME)
    store = RecordStore(str(out))
    feeds = [ClockFeed(plug.path, store) for plug in plugs]
    for feed in feeds:
        feed.poll()
    for index in range(max(len(first), len(second))):
        for plug, lines in zip(plugs, (first, second), strict=True):
            if index < len(lines):
                before = sum(log.expected for log in store.logs_of("c1"))
                send(plug, lines[index : index + 1])
                serve(feeds, lambda before=before: sum(log.expected for log in store.logs_of("c1")) > before)
    logs = store.logs_of("c1")
    assert [(log.clock_id, log.expected, log.duplicates) for log in logs] == [
        ("c1", len(first), 0),
        ("c1_r2", len(second), 0),
    ]
    said = [text for _, text in store.notices]
    assert any("TWO CLOCKS ARE RUNNING WITH THIS ID" in text for text in said)
    assert any("TWO CLOCKS" in line for line in screen_lines(snapshot(feeds, store)))  # on the console
    for feed in feeds:
        feed.close()
    store.close()
    assert game_lines(out, "c1") == first and game_lines(out, "c1_r2") == second
    assert len(results(str(out))) == 2
    for plug in plugs:
        plug.pull()


def test_a_second_clock_with_one_id_and_one_boot_id_on_another_port_far_behind_is_kept(tmp_path):
    """Two simulated clocks on one machine share the kernel's boot id; the first is past the last
    records a log compares (RECENT), so the second's start is not a repeat: it is another port's."""
    from support.twin_clocks import Y_GAME, game_lines
    from support.twin_clocks import journal_of as c1_journal

    long_game = "".join(f"{2 * n} press {'BA'[n % 2]}\n" for n in range(300))
    first, second = c1_journal(long_game, "one-machine"), c1_journal(Y_GAME, "one-machine")
    out = tmp_path / "out"
    plugs = [Plug(str(tmp_path), f"ttyUSB{n}") for n in (0, 1)]
    store = RecordStore(str(out))
    feeds = [ClockFeed(plug.path, store) for plug in plugs]
    for feed in feeds:
        feed.poll()
    for start in range(0, len(first), 10):  # (a pty holds a few kB: in pieces, each read before the next)
        send(plugs[0], first[start : start + 10])
        serve(feeds, lambda start=start: store.log_of("c1").expected == min(len(first), start + 10))
    send(plugs[1], second)
    serve(feeds, lambda: len(store.logs_of("c1")) == 2 and store.logs_of("c1")[1].expected == len(second))
    for feed in feeds:
        feed.close()
    store.close()
    assert game_lines(out, "c1") == first and game_lines(out, "c1_r2") == second
    for plug in plugs:
        plug.pull()
