"""What the hall knows of TSH and says of its queue (issue 38, points 2 and 3): each table
queued, in TSH, refused by TSH, changed after TSH has it, or the director's (a forfeit), on the
Scores page's state, on `audit.log`, and in `tileclock scores --queue`'s output; a queue folder
the hall may not write (as root too) and a full records disk, each said once, and the scores
queued once when they can be.

Round 3 of the sample divisions, queued by the hall into a copy of TSH's folder and run by the
TSH model (tests/support/tsh_model.py), as in tests/test_tsh_queue.py.
"""

import errno
import io
import json
import os
from contextlib import redirect_stdout

from support.tsh_event import ENTRIES, WANT_A, hall_folder, played, tsh_dir  # noqa: F401  (fixtures: pyproject.toml)
from support.tsh_model import TshModel
from tileclock.cli import main
from tileclock.director.event import tsh_queue
from tileclock.director.event.hall_queue import HallQueue, state_key
from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.audit_read import read


def _aged(records, seconds):
    """Every game in the hall's queue record made `seconds` older (queued that long ago)."""
    path = os.path.join(records, tsh_queue.RECORD)
    with open(path, encoding="utf-8") as file:
        record = json.load(file)
    for game in record["games"].values():
        game["at_s"] -= seconds
    with open(path, "w", encoding="utf-8") as file:
        json.dump(record, file)


def _states(records):
    """The `tsh_queue` lines of table states on the records' audit.log: [(table, state)]."""
    refused = []
    lines = [e["changed"] for e in read(records, refused) if e["action"] == "tsh_queue"]
    assert refused == []
    return [(c["table"], c["tsh"]) for c in lines if "table" in c]


def test_a_score_changed_after_tsh_has_it_says_change_it_in_tsh_and_is_never_refused(
    played, tsh_dir, tmp_path
):
    """It once read `refused by TSH?` two minutes after it was queued: the .t file's other
    scores are TSH's, which the hall never re-queues; the director changes them in TSH."""
    records, book = hall_folder(played, tmp_path / "hall")
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None, audit=AuditLog(records))
    queue.step()
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    queue.step()
    assert queue.state(3)["tables"]["table 1"]["tsh"] == "in TSH"
    book.enter(3, "1", 412, 380, "director")  # the slip read again: Anderson's was 10 more
    _aged(records, 300)
    queue.step()
    table = queue.state(3)["tables"]["table 1"]
    assert table["tsh"] == "changed" and "in TSH (`es`)" in table["tsh_why"]
    assert "Anderson, Ann 382" in table["tsh_why"] and "392" in table["tsh_why"]
    ran = len(tsh.ran)
    tsh.run_queue()
    assert len(tsh.ran) == ran and tsh.scores("A", 3) == WANT_A  # TSH keeps its own until `es`
    assert ("3/A/table 1", "changed") in _states(records)


def test_each_table_s_state_in_tsh_is_on_the_audit_trail_once_as_it_changes(played, tsh_dir, tmp_path):
    records, book = hall_folder(played, tmp_path / "hall")
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None, audit=AuditLog(records))
    queue.step()
    # the absent player's seat is not known to the hall: the table is not queued, and says why
    assert _states(records) == [("3/B/table 4", "not queued")]
    TshModel(tsh_dir).run_queue()
    queue.step()
    queue.step()  # nothing changed: no line more
    states = _states(records)
    in_tsh = sorted(table for table, state in states if state == "in TSH")
    # Ito's bye too, whose line goes once TSH has scored it
    assert in_tsh == ["3/A/table 1", "3/A/table 2", "3/A/table 3", "3/B/bye 3", "3/B/table 5"]
    assert len(states) == 6


def test_a_score_tsh_never_took_is_refused_on_the_trail_and_in_scores_output(played, tsh_dir, tmp_path):
    out = tmp_path / "out"
    argv = ["scores", played, "--tsh-dir", tsh_dir, "--round", "3", "--entries", ENTRIES]
    argv += ["--out", str(out), "--queue"]
    with redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    assert "most likely refused" not in _run(argv)  # at once: not in TSH yet, not refused yet
    _aged(str(out), 300)  # TSH never ran its queue (not started with accept_remote_commands)
    printed = _run(argv)
    assert "already queued 3/A/table 1: not queued again" in printed
    assert "TSH most likely refused it" in printed.split("already queued 3/A/table 1")[1].split("\n")[1]
    assert "\nqueued " not in printed  # nothing put into the queue again


def _run(argv):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def test_a_forfeit_is_the_director_s_with_every_line_to_type(played, tsh_dir, tmp_path):
    records, book = hall_folder(played, tmp_path / "hall")
    book.enter(3, "4", 0, 0, "director", seat_a=4)  # the director: Jones (#4) sat at A, absent
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None)
    queue.step()
    table = queue.state(3)["tables"]["table 4"]
    assert table["tsh"] == "for the director"
    assert table["tsh_why"].endswith("type pair 4 0 3 B; pair 1 0 3 B; then a 3 B: 4 -50, 1 50")
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and not any(" 4 1 " in c or " 1 4 " in c for c in tsh.ran if "B" in c)


def test_a_queue_folder_the_hall_may_not_write_is_said_once_and_written_when_it_can(
    played, tsh_dir, tmp_path, monkeypatch
):
    """A folder this user may not write (as root, where modes do not stop it, the refusal the
    kernel gives is made here): the console says it once, the page keeps it, and the scores are
    queued on the first pass that can write."""
    records, book = hall_folder(played, tmp_path / "hall")
    folder = tsh_queue.queue_folder(tsh_dir)
    real = os.open

    def refused(path, *args, **kwargs):
        if str(path).startswith(folder):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(tsh_queue.os, "open", refused)
    said = []
    queue = HallQueue(tsh_dir, records, book, say=said.append)
    queue.step()
    queue.step()
    assert len(said) == 1 and "this user may not write there" in said[0] and folder in said[0]
    assert "queued when it can be written again" in queue.state(3)["error"]
    assert queue.state(3)["tables"]["table 1"]["tsh"] == "waiting"
    monkeypatch.setattr(tsh_queue.os, "open", real)
    queue.step()
    assert said[-1] == "TSH's queue: writing again" and queue.state(3)["error"] is None
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A


def test_a_full_records_disk_is_said_as_the_record_s_and_nothing_reaches_tsh_twice(
    played, tsh_dir, tmp_path, monkeypatch
):
    """The second game's files written and counted in TSH's queue, then its record cannot be
    saved: the message names the queue record (it named TSH's queue, which was fine), and the
    next pass finds that game in the queue rather than sending it again."""
    records, book = hall_folder(played, tmp_path / "hall")
    real = tsh_queue.replace_file
    saves = []

    def full(path, data, *a, **kw):
        if path.endswith(tsh_queue.RECORD):
            saves.append(path)
            if len(saves) == 4:  # game 1 pending, queued; game 2 pending, then this
                raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data, *a, **kw)

    monkeypatch.setattr(tsh_queue, "replace_file", full)
    said = []
    queue = HallQueue(tsh_dir, records, book, say=said.append)
    queue.step()
    assert len(said) == 1 and f"could not write the queue record {records}" in said[0]
    assert "the disk is full" in said[0] and "TSH's queue in" not in said[0]
    monkeypatch.setattr(tsh_queue, "replace_file", real)
    queue.step()
    assert said[-1] == "TSH's queue: writing again"
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.provisional == {} and tsh.scores("A", 3) == WANT_A
    assert len(tsh.ran) == len(set(tsh.ran)) == 9  # four games of two, one bye: each once


def test_a_config_tsh_without_accept_remote_commands_is_said_and_the_scores_still_queued(
    played, tsh_dir, tmp_path
):
    """Without the line TSH never reads its queue: the hall said nothing, and two minutes later
    each table read `refused by TSH?` with reasons that were not it."""
    config = os.path.join(tsh_dir, "config.tsh")
    with open(config, "w", encoding="utf-8") as file:
        file.write("config accept_remote_commands = 0\ndivision A a.t\ndivision B b.t\n")
    records, book = hall_folder(played, tmp_path / "hall")
    said = []
    queue = HallQueue(tsh_dir, records, book, say=said.append)
    queue.step()
    queue.step()
    assert len(said) == 1 and f"{config} has no `config accept_remote_commands = 1`" in said[0]
    assert "restart TSH" in queue.state(3)["error"]
    assert queue.state(3)["tables"]["table 1"]["tsh"] == "queued"  # read once TSH is restarted
    out = tmp_path / "out"
    argv = ["scores", played, "--tsh-dir", tsh_dir, "--round", "3", "--entries", ENTRIES, "--out", str(out)]
    assert "NOTE: " + config + " has no `config accept_remote_commands = 1`" in _run(argv)
    with open(config, "w", encoding="utf-8") as file:
        file.write("config accept_remote_commands = 1\ndivision A a.t\ndivision B b.t\n")
    queue.step()
    assert said[-1] == "TSH's queue: writing again" and queue.state(3)["error"] is None
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A


def _rewritten(tsh_dir, old, new):
    """TSH's director changing a.t at TSH's prompt (re-pairing, deleting a score): the line
    beginning `old` begins `new`."""
    path = os.path.join(tsh_dir, "a.t")
    with open(path, encoding="utf-8") as file:
        text = file.read()
    assert old in text
    with open(path, "w", encoding="utf-8") as file:
        file.write(text.replace(old, new, 1))


def test_a_score_tsh_refused_names_the_likely_reason_from_its_t_file(played, tsh_dir, tmp_path):
    """`refused by TSH?` gave both reasons it might be; the `.t` file as TSH has it now says which."""
    records, book = hall_folder(played, tmp_path / "hall")
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None)
    queue.step()
    _rewritten(tsh_dir, "Anderson, Ann 1820 2 3 4;", "Anderson, Ann 1820 2 3 6;")  # re-paired
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert any(text.startswith("aps 1 4 ") for text, _why in tsh.refused)
    _aged(records, 300)
    queue.step()
    table = queue.state(3)["tables"]["table 1"]
    assert table["tsh"] == "refused by TSH?"
    assert "(TSH pairs Anderson, Ann (#1) with #6 in round 3 now, not #4)" in table["tsh_why"]


def test_a_round_tsh_is_not_on_is_named_on_the_page_and_a_re_pairing_by_scores(played, tsh_dir, tmp_path):
    """The table re-paired in TSH is in no match of the round any more: `scores` said nothing of
    it; it now says it was queued earlier, and why TSH most likely refused it."""
    records, book = hall_folder(played, tmp_path / "hall")
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None)
    queue.step()
    _rewritten(tsh_dir, "Diaz, Dan 1600 3 6 1; 390 365;", "Diaz, Dan 1600 3 6 1; 390;")  # round 2's gone
    _aged(records, 300)
    queue.step()
    table = queue.state(3)["tables"]["table 1"]
    assert table["tsh"] == "refused by TSH?"
    assert "(TSH has Diaz, Dan (#4) on round 2, not round 3)" in table["tsh_why"]
    _rewritten(tsh_dir, "Diaz, Dan 1600 3 6 1; 390;", "Diaz, Dan 1600 3 6 1; 390 365;")
    _rewritten(tsh_dir, "Anderson, Ann 1820 2 3 4;", "Anderson, Ann 1820 2 3 6;")
    argv = ["scores", played, "--tsh-dir", tsh_dir, "--round", "3", "--entries", ENTRIES]
    printed = _run([*argv, "--out", records, "--queue"])
    assert "queued earlier 3/A/table 1: not in round 3's pairings as TSH's files say now" in printed
    assert "(TSH pairs Anderson, Ann (#1) with #6 in round 3 now, not #4)" in printed


def test_two_divisions_byes_to_the_same_player_number_keep_a_state_each():
    """Player 3 of division A and player 3 of division B may both have a bye in round 3: each bye
    keeps its own state in TSH (one overwrote the other before); a table keeps its page row's key."""
    keys = {state_key(full) for full in ("3/A/bye 3", "3/B/bye 3", "3/A/table 1", "3/B/table 5")}
    assert keys == {"A/bye 3", "B/bye 3", "table 1", "table 5"}
