"""The journal: every record on disk before it is sent, and a damaged file never stops the clock."""

import os

from conftest import tap
from tileclock.clock.protocol import unframe
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config import Config
from tileclock.device.journal import Journal
from tileclock.sim.simulator import Simulator


def play(journal, presses=((0, "B"), (10, "A"), (20, "B"))):
    sim = Simulator(Config(), journal=journal)
    for t_s, button in presses:
        tap(sim, button, t_s)
    sim.finish(30 * NS_PER_S)
    lines = sim.serial_lines()
    sim.close()
    return lines


def test_every_record_sent_is_in_the_journal_file_first(tmp_path):
    path = str(tmp_path / "journal.log")
    sent = play(Journal(path))
    on_disk = open(path).read().splitlines()
    assert sent == on_disk and len(sent) == 6  # boot, new_game, start, switch, switch, status
    assert [unframe(line)["seq"] for line in on_disk] == list(range(6))


def test_seq_goes_on_across_restarts_and_nothing_is_lost(tmp_path):
    path = str(tmp_path / "journal.log")
    play(Journal(path))
    second = play(Journal(path))
    assert unframe(second[0])["seq"] == 6 and unframe(second[0])["ev"] == "boot"
    assert [unframe(line)["seq"] for line in open(path)] == list(range(12))


def test_a_record_cut_off_mid_write_is_dropped_the_rest_kept_and_the_file_kept_aside(tmp_path):
    path = str(tmp_path / "journal.log")
    play(Journal(path))
    whole = open(path, "rb").read()
    torn = whole[: len(whole) - 40]  # power lost while the last record was being written
    open(path, "wb").write(torn)
    journal = Journal(path)
    assert journal.next_seq == 5 and "cut off mid-write" in journal.damage
    assert open(journal.kept_aside, "rb").read() == torn  # kept for the director, never deleted
    assert open(path, "rb").read() == b"".join(whole.splitlines(keepends=True)[:5])
    sent = play(journal)
    assert unframe(sent[0])["seq"] == 5


def test_a_bad_checksum_keeps_every_good_record_before_it(tmp_path):
    path = str(tmp_path / "journal.log")
    play(Journal(path))
    lines = open(path).read().splitlines()
    lines[3] = lines[3].replace('"t_ms":', '"t_ms":1', 1)
    open(path, "w").write("\n".join(lines) + "\n")
    journal = Journal(path)
    assert journal.next_seq == 3 and "integrity" in journal.damage
    assert os.path.exists(journal.kept_aside)


def test_a_lost_final_line_ending_loses_no_record(tmp_path):
    path = str(tmp_path / "journal.log")
    play(Journal(path))
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-1])
    journal = Journal(path)
    assert journal.next_seq == 6 and journal.damage is None
    play(journal)
    assert [unframe(line)["seq"] for line in open(path)] == list(range(12))
