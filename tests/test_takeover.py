"""An earlier version's single-file journal is taken over into segments: every good record once, a
game a segment, in memory that does not grow with the file, and a kill at any instant loses nothing."""

import os
import shutil
import signal
import subprocess
import sys
import tracemalloc

from tileclock.bench.history import make_legacy, sample_game
from tileclock.device.assembly import LEGACY_FILE, open_journal
from tileclock.device.journal.takeover import TAKEN_OVER, take_over
from tileclock.wire import segments
from tileclock.wire.protocol import unframe

GAME = sample_game(minutes=3)


def held(state):
    """Every record the journal in `state` holds, decoded, as a restarted clock reads it."""
    journal = open_journal(str(state))
    records = [unframe(line) for _, line in journal.read(0)]
    journal.close()
    return records


def games_on_disk(state):
    """The events of each segment on disk, a list a segment."""
    folder = state / "journal"
    return [
        [record["ev"] for _, _, record in segments.iter_lines(str(folder / segments.segment_name(first)))]
        for first in segments.list_segments(str(folder))
    ]


def test_every_record_is_taken_over_once_a_game_a_segment(tmp_path):
    state = tmp_path / "state"
    written = make_legacy(str(state), 4, GAME)
    assert not (state / "journal").exists()
    records = held(state)
    assert [r["seq"] for r in records] == list(range(written))
    assert records == [dict(r, seq=n) for n, r in enumerate(GAME * 4)]
    on_disk = games_on_disk(state)
    assert len(on_disk) == 4 and all(events.count("new_game") == 1 for events in on_disk)
    assert all(events[0] == "new_game" for events in on_disk[1:])  # (a power-on's boot ends the one before)
    assert (state / (LEGACY_FILE + TAKEN_OVER)).exists() and not (state / LEGACY_FILE).exists()


def test_damaged_lines_cost_only_themselves_and_their_bytes_are_kept_aside(tmp_path):
    state = tmp_path / "state"
    make_legacy(str(state), 2, GAME)
    legacy = state / LEGACY_FILE
    lines = legacy.read_bytes().split(b"\n")[:-1]
    lines[5] = lines[5].replace(b'"ev"', b'"eV"')  # a flipped bit: its CRC no longer matches
    lines.insert(9, lines[3])  # a seq again, out of order
    lines.insert(12, b"x" * 100_000)  # a line no record comes near
    data = b"\n".join(lines) + b"\n" + lines[-1][:30]  # and a last line cut off mid-write
    legacy.write_bytes(data)
    journal = open_journal(str(state))
    (note, _), *_ = journal.take_notes()
    kept = [unframe(line) for _, line in journal.read(0)]
    journal.close()
    assert [r["seq"] for r in kept] == [n for n in range(2 * len(GAME)) if n != 5]
    assert "line 6:" in note and "line 10: seq 3 after" in note and "line 13: longer than" in note
    assert "cut off mid-write" in note
    (copy,) = (state / "journal" / segments.DAMAGED).iterdir()
    assert copy.read_bytes() == data  # the old file's bytes as they were


def test_memory_does_not_grow_with_the_old_file(tmp_path):
    small, large = tmp_path / "small", tmp_path / "large"
    make_legacy(str(small), 1, GAME)
    make_legacy(str(large), 150, GAME)
    peaks = []
    for state in (small, large):
        os.makedirs(state / "journal")
        tracemalloc.start()
        take_over(str(state / LEGACY_FILE), str(state / "journal"))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    size = (large / (LEGACY_FILE + TAKEN_OVER)).stat().st_size
    bound = 2 * peaks[0] + 64 * 1024  # about what taking over one game holds at its peak
    assert peaks[1] < bound < size / 5  # 150 games held no more, and far less than their file


#: in a child process: take the old journal in argv[1] over, killing itself (SIGKILL, as a power cut
#: or the OOM killer would) at the Nth fsync or rename (argv[2]): every point where the disk moves on
_KILLED_AT = """
import os, signal, sys
from tileclock.device.assembly import open_journal
calls = [0]
def deadly(real):
    def call(*args):
        calls[0] += 1
        if calls[0] == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args)
    return call
os.fsync, os.replace = deadly(os.fsync), deadly(os.replace)
open_journal(sys.argv[1]).close()
"""


def test_a_kill_at_any_instant_of_the_take_over_loses_nothing(tmp_path):
    state = tmp_path / "state"
    written = make_legacy(str(state), 3, GAME)
    original = (state / LEGACY_FILE).read_bytes()
    point, killed = 0, 0
    while True:
        point += 1
        done = subprocess.run([sys.executable, "-c", _KILLED_AT, str(state), str(point)], capture_output=True)
        if done.returncode == 0:
            break  # the take-over (and the journal's own start) finished before this point
        assert done.returncode == -signal.SIGKILL, done.stderr.decode()
        killed += 1
        if (state / LEGACY_FILE).exists():  # not complete: the old file is still whole
            assert (state / LEGACY_FILE).read_bytes() == original
        after = tmp_path / f"after-kill-{point}"  # a start after this kill (on a copy: the next
        shutil.copytree(state, after)  # point's kill goes on from the same state)
        assert [r["seq"] for r in held(after)] == list(range(written))
    assert killed >= 3 + 2  # a segment each, the folder, the old file's rename
    assert [r["seq"] for r in held(state)] == list(range(written))
    assert not (state / LEGACY_FILE).exists()
