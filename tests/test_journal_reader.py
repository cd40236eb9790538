"""Reading a journal back is read-only: a running clock's journal, or a card's, is left exactly as it
was (no mark moved, no repair, no fsync), and the reader sees every record the clock has settled."""

import builtins
import contextlib
import os

from conftest import tap
from tileclock.bench.history import make_history, sample_game
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.journal import Journal
from tileclock.device.journal.reader import JournalReader
from tileclock.sim.simulator import Simulator
from tileclock.wire import segments

S = NS_PER_S
#: what a reader must never call: each writes, moves, removes, makes or syncs something
WRITING = ("fsync", "fdatasync", "rename", "replace", "unlink", "mkdir", "makedirs", "write", "truncate")


def snapshot(folder):
    """Every name under `folder` (itself included) with its mtime, and every file's bytes."""
    found = {".": os.stat(folder).st_mtime_ns}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            data = open(path, "rb").read() if name in files else None
            found[os.path.relpath(path, folder)] = (os.stat(path).st_mtime_ns, data)
    return found


@contextlib.contextmanager
def only_reading(monkeypatch):
    """Within it, any write, rename, removal, folder made or fsync fails the test."""

    def refused(name):
        def call(*args, **kwargs):
            raise AssertionError(f"a reader called os.{name}{args}")

        return call

    real_open, real_os_open = builtins.open, os.open

    def reading_open(file, mode="r", *args, **kwargs):
        assert not set(mode) & set("wax+"), f"a reader opened {file} with mode {mode!r}"
        return real_open(file, mode, *args, **kwargs)

    def reading_os_open(path, flags, *args, **kwargs):
        assert not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT), f"a reader opened {path} to write"
        return real_os_open(path, flags, *args, **kwargs)

    with monkeypatch.context() as patch:
        for name in WRITING:
            patch.setattr(os, name, refused(name))
        patch.setattr(builtins, "open", reading_open)
        patch.setattr(os, "open", reading_os_open)
        yield


def running_clock(folder, presses=12):
    """A clock on the journal in `folder`, its checkpoints on, played for a while and still running."""
    sim = Simulator(Config(), journal=Journal.open(folder), time=VirtualTime(), checkpoints=True)
    for turn in range(presses):
        tap(sim, "B" if turn % 2 == 0 else "A", 1 + turn * 3)
    sim.run_to((30 + presses * 3) * S)  # (a checkpoint or two, after the last press)
    return sim


def test_reading_a_running_clocks_journal_leaves_it_exactly_as_it_was(tmp_path, monkeypatch):
    folder = str(tmp_path / "journal")
    sim = running_clock(folder)
    before = snapshot(folder)
    reader = JournalReader(folder)
    with only_reading(monkeypatch):
        for _ in range(3):  # (three opens of a `Journal` here once moved the mark by 30,000)
            assert reader.records() and reader.lines and list(reader.read(3, 7))
        assert snapshot(folder) == before  # the listing (marks are names), every mtime, every byte
    sim.close()


def test_the_snapshot_sees_what_a_start_up_does_to_a_running_clocks_journal(tmp_path):
    """The check above would catch it: opening a `Journal` is the clock's start-up, and moves its mark."""
    folder = str(tmp_path / "journal")
    sim = running_clock(folder)
    before = snapshot(folder)
    reserved = segments.read_mark(folder, segments.RESERVED)
    Journal.open(folder)
    assert segments.read_mark(folder, segments.RESERVED) > reserved and snapshot(folder) != before
    sim.close()


def test_a_reader_sees_every_record_the_running_clock_has_settled(tmp_path):
    folder = str(tmp_path / "journal")
    sim = running_clock(folder)
    reader = JournalReader(folder)
    settled = sim.journal.settled_seq
    # checkpoints too, which the clock does not wait for the card to keep (writeback.py)
    assert any(r["ev"] == "checkpoint" for r in reader.records())
    assert [seq for seq, _ in reader.read()] == list(range(settled))
    assert list(reader.read()) == list(sim.journal.read(0))  # the clock's own read, line for line
    assert list(reader.read(4, 9)) == list(sim.journal.read(4, 9))
    tap(sim, "B", 90)  # it goes on: the next read sees the new records
    assert [seq for seq, _ in reader.read()] == list(range(sim.journal.settled_seq))
    assert sim.journal.settled_seq > settled
    sim.close()


def test_a_reader_leaves_damage_out_and_repairs_nothing(tmp_path, monkeypatch):
    folder = str(tmp_path / "journal")
    running_clock(folder).close()
    path = os.path.join(folder, segments.segment_name(0))
    lines = open(path).read().splitlines()
    lines[3] = lines[3].replace('"t_ms":', '"t_ms":1', 1)  # one bit of history flipped
    damaged = ("\n".join(lines) + "\n").encode() + b'{"seq":99,"ev":"sw'  # and a torn last write
    open(path, "wb").write(damaged)
    before = snapshot(folder)
    with only_reading(monkeypatch):
        seqs = [seq for seq, _ in JournalReader(folder).read()]
    assert 3 not in seqs and seqs == [s for s in range(len(lines)) if s != 3]  # every good record
    assert snapshot(folder) == before and open(path, "rb").read() == damaged  # nothing kept aside, no repair
    assert not os.path.exists(os.path.join(folder, segments.DAMAGED))


def test_a_reader_of_a_folder_not_made_yet_finds_nothing_and_makes_nothing(tmp_path, monkeypatch):
    folder = str(tmp_path / "journal")
    with only_reading(monkeypatch):
        assert JournalReader(folder).records() == [] and JournalReader(folder).lines == []
    assert not os.path.exists(folder)


def test_a_reader_reads_on_past_a_segment_the_running_clock_pruned_since_its_listing(tmp_path, monkeypatch):
    make_history(str(tmp_path), 3, sample_game())  # three games, a segment each
    folder = str(tmp_path / "journal")
    firsts = segments.list_segments(folder)
    everything = list(JournalReader(folder).read())
    real = segments.list_segments

    def listed_then_pruned(directory):
        names = real(directory)
        os.unlink(os.path.join(folder, segments.segment_name(firsts[0])))  # the clock prunes meanwhile
        return names

    monkeypatch.setattr(segments, "list_segments", listed_then_pruned)
    assert list(JournalReader(folder).read()) == [(seq, line) for seq, line in everything if seq >= firsts[1]]
