"""Round control on the director's page (issue 30, point 4): a round started for a time of day on
the boards that take part, through a real mosquitto to simulated clocks in virtual time, each with
a wall clock of its own; what the page then says of the round, in Debian's chromium; and the
start's words checked before anything is sent."""

import json
import os
import re

import pytest

from support.hall_helpers import pages_question, wait_for
from support.halls import settle
from support.round_hall import (
    AT_14,
    UTC,
    S,
    control,
    hall,  # noqa: F401  (the fixture: three school clocks, the hall, its page)
)
from tileclock.clock.timecode import NS_PER_MS
from tileclock.director.hall import audit, audit_read
from tileclock.director.hall.round_control import LEAD_S, RoundControl
from tileclock.director.pages.app import ONCE_HEADER
from tileclock.director.pages.board_routes import round_step_as, unwritten
from tileclock.director.pages.web import COMMAND_HEADER, HallPage


class Feed:
    """The feed as round control sees it: the boards heard, and the commands sent."""

    def __init__(self, boards=("1", "2", "3", "11")):
        self.sent = []
        self.boards = [{"board": b, "clock": f"clock-{b}"} for b in boards]

    def command(self, text, clock_id="all"):
        self.sent.append((clock_id, text))

    def snapshot(self):
        return {"boards": self.boards}


def test_a_start_names_its_time_of_day_and_its_boards():
    feed = Feed()
    started = control(feed).start(3, "14:00", "1-2, 11")
    assert feed.sent == [(f"clock-{b}", f"set round=3 start={AT_14}") for b in ("1", "2", "11")]
    assert started == {
        "round": 3,
        "start_ms": AT_14,
        "start": "14:00:00",
        "boards": ["1", "2", "11"],
        "clocks": ["clock-1", "clock-2", "clock-11"],
    }
    feed.sent.clear()
    assert control(feed).start(4)["start_ms"] == AT_14 - 60_000 + LEAD_S * 1000  # empty: in 10 s
    assert [clock for clock, _ in feed.sent] == ["clock-1", "clock-2", "clock-3", "clock-11"]  # every board


@pytest.mark.parametrize(
    "start, boards, said",
    [
        ("13:58", "", "that time has passed (it is 13:59:00)"),
        ("2pm", "", "a time of day, 14:00 or 14:00:00"),
        ("25:00", "", "a time of day"),
        ("14:00", "1, 9", "no board 9 has been heard from"),
        ("14:00", "40-50", "none of them"),
    ],
)
def test_a_start_that_cannot_be_is_said_and_nothing_is_sent(start, boards, said):
    feed = Feed()
    with pytest.raises(ValueError, match=re.escape(said)):
        control(feed).start(3, start, boards)
    assert feed.sent == []


def test_a_round_started_for_14_00_starts_on_each_board_at_14_00_by_its_own_clock(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    page.goto(server.address)
    page.locator(".board").nth(2).wait_for()
    page.fill("#round", "3")
    page.fill("#start-at", "14:00:00")
    page.fill("#boards", "c1, c2")  # the boards are named after their clocks here
    page.click("#start-round")
    assert pages_question(page) == "Start round 3 at 14:00:00 on boards c1, c2?"
    page.locator("#sent", has_text="round 3 starts at 14:00:00 on 2 boards").wait_for()

    def taken(clock):
        clocks.pump()
        return any(r["ev"] == "set" for r in clocks.sims[clock].journal.records())

    for clock in ("c1", "c2"):
        wait_for(lambda clock=clock: taken(clock), what=f"{clock} to take the start")
    assert not [r for r in clocks.sims["c3"].journal.records() if r["ev"] == "set"]  # not in the round
    # each clock runs on in virtual time past its own 14:00
    for clock in ("c1", "c2"):
        sim = clocks.sims[clock]
        sim.run_to((int(clock[1:]) * 60 + 5) * S)
        (start,) = [r for r in sim.journal.records() if r["ev"] == "round_start"]
        epoch = AT_14 - int(clock[1:]) * 60_000
        assert epoch + start["at_ns"] // NS_PER_MS == AT_14 and start["start_ms"] == AT_14
    settle(feed, clocks, "the round's records")
    status = page.locator("#round-status")
    wait_for(
        lambda: "Round 3, from 14:00:00 on 2 boards" in status.inner_text(), what="the round on the page"
    )
    assert "2 not started (Board c1, Board c2)" in status.inner_text()  # nobody has pressed yet
    answer = page.context.request.get(server.address + "api/round")
    assert answer.json()["round"]["clocks"] == ["c1", "c2"]
    # the start is on the audit trail, one line for the round, and each clock's `set` names the
    # same page session
    (line,) = [e for e in audit_read.read(feed.store.outdir) if e["action"] == "round_start"]
    assert re.fullmatch(r"page-[0-9a-f]{8}", line["by"]) and line["clock"] == "all"
    assert line["changed"] == {"round": 3, "start_ms": AT_14, "start": "14:00:00", "boards": ["c1", "c2"]}
    for clock in ("c1", "c2"):
        (set_,) = [r for r in clocks.sims[clock].journal.records() if r["ev"] == "set"]
        assert set_["by"] == line["id"]  # the action: who, the hall's run and a count
        assert re.fullmatch(rf"{line['by']}_[0-9a-z]{{6}}_1", line["id"])
    # round over: on the trail before it leaves, and in each clock's `end`
    page.click("#end-round")
    pages_question(page)
    page.locator("#sent", has_text="round over").wait_for()
    (over,) = [e for e in audit_read.read(feed.store.outdir) if e["action"] == "round_over"]
    assert over["by"] == line["by"] and over["changed"] == {"round": 3}
    assert over["command"] == f"round over by={over['id']}"

    def ended(clock):
        clocks.pump()
        return [r for r in clocks.sims[clock].journal.records() if r["ev"] == "end"]

    for clock in ("c1", "c2", "c3"):
        wait_for(lambda clock=clock: ended(clock), what=f"{clock} to take round over")
        assert ended(clock)[0]["by"] == over["id"] and ended(clock)[0]["reason"] == "round_over"


def own_headers(page, server):
    """The headers of the page's own script in `page`'s browser: its Origin, the command header
    and a one-time value asked for as the script asks (session.js)."""
    headers = {COMMAND_HEADER: "1", "Origin": server.address.rstrip("/")}
    once = page.context.request.post(server.address + "api/once", headers=headers).json()["once"]
    return {**headers, ONCE_HEADER: once}


def test_a_start_the_page_refuses_sends_nothing(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    answer = page.context.request.post(
        server.address + "api/round/start",
        headers=own_headers(page, server),
        form={"round": "3", "start": "13:00", "boards": ""},
    )
    assert answer.status == 400 and "has passed" in answer.text()
    clocks.pump()  # a refused start published nothing: there is nothing to wait for
    assert not [r for sim in clocks.sims.values() for r in sim.journal.records() if r["ev"] == "set"]


@pytest.mark.parametrize("number", ["\u00b2", "\u0663", "1" * 10])
def test_a_round_number_in_other_digits_is_refused_in_words(hall, page, number):  # noqa: F811  (the fixtures imported from their module)
    """`str.isdigit` takes a superscript two, which `int` refuses: a 400 in words, not a 500."""
    clocks, feed, server = hall
    answer = page.context.request.post(
        server.address + "api/round/start",
        headers=own_headers(page, server),
        form={"round": number, "start": "", "boards": ""},
    )
    assert answer.status == 400 and "round: a number from 1 to 99" in answer.text()


def test_the_round_is_kept_in_the_records_folder_and_read_back_after_a_restart(tmp_path):
    feed = Feed()
    started = RoundControl(feed, now_ns=lambda: (AT_14 - 60_000) * 1_000_000, zone=UTC, folder=tmp_path)
    current = started.start(3, "14:00", "1-2")
    assert sorted(os.listdir(tmp_path)) == ["round.json"]  # written whole: no temporary left
    again = control_in(feed, tmp_path)
    assert again.current == current and again.problem is None
    over = again.over()
    assert control_in(feed, tmp_path).current == over and over["over_ms"] == AT_14 - 60_000


def test_a_link_planted_at_the_round_files_temporary_is_never_written_through(tmp_path):
    """round.json is written aside first: a symlink (or a hard link) left at round.json.new must
    not carry the round to a file outside the records folder, or rewrite the link's other name."""
    records, outside = tmp_path / "records", tmp_path / "outside"
    records.mkdir(), outside.mkdir()
    (outside / "victim").write_text("kept\n")
    (records / "round.json.new").symlink_to(outside / "victim")
    started = RoundControl(Feed(), now_ns=lambda: (AT_14 - 60_000) * 1_000_000, zone=UTC, folder=records)
    started.start(3, "14:00", "1-2")
    assert (outside / "victim").read_text() == "kept\n"
    assert (
        not (records / "round.json").is_symlink()
        and json.loads((records / "round.json").read_text())["round"] == 3
    )
    os.link(records / "round.json", outside / "hard")  # the next step's temporary, a hard link
    os.link(outside / "hard", records / "round.json.new")
    started.over()
    assert json.loads((outside / "hard").read_text()).get("over_ms") is None  # its other name untouched


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"{not json", "not_json"),
        (b"[" * 5000 + b"]" * 5000, "too_deep"),
        (b'{"v":1,"round":"3"}', "wrong_kind"),  # a round is a number
        (b" " * 70_000, "too_large"),
        (
            json.dumps(
                {"v": 1, "round": 3, "start_ms": 1, "start": "14:00:00", "boards": ["<b>"], "clocks": ["c1"]}
            ).encode(),
            "wrong_kind",
        ),
        (
            json.dumps(
                {"v": 7, "round": 3, "start_ms": 1, "start": "14:00:00", "boards": ["1"], "clocks": ["c1"]}
            ).encode(),
            "wrong_kind",
        ),  # another format
        (b"\xff\xfe", "not_text"),
    ],
)
def test_a_saved_round_the_decoder_refuses_is_kept_aside_and_said(tmp_path, content, reason):
    (tmp_path / "round.json").write_bytes(content)
    control = control_in(Feed(), tmp_path)
    assert control.current is None  # never a round nobody started
    assert f"({reason}:" in control.problem and "kept aside as round.json.bad-" in control.problem
    (aside,) = [name for name in os.listdir(tmp_path) if name.startswith("round.json.bad-")]
    assert (tmp_path / aside).read_bytes() == content and not (tmp_path / "round.json").exists()


def test_a_round_that_cannot_be_kept_is_not_sent(tmp_path):
    (tmp_path / "round.json").mkdir()  # the file cannot be written over: a folder stands there
    feed = Feed()
    control = control_in(feed, tmp_path)
    with pytest.raises(OSError):
        control.start(3, "14:00", "1")
    assert feed.sent == [] and control.current is None


def control_in(feed, folder):
    return RoundControl(feed, now_ns=lambda: (AT_14 - 60_000) * 1_000_000, zone=UTC, folder=folder)


class AuditedHall:
    """What `round_step_as` needs of the hall: the feed, its audit trail and its round control."""

    def __init__(self, folder):
        self.feed = Feed()
        self.audit = audit.AuditLog(str(folder))
        self.rounds = control_in(self.feed, folder)


def said_503(error):
    return unwritten(lambda status, text: (status, text), error)


@pytest.mark.parametrize("step", ["start", "over"])
def test_a_round_file_the_disk_refuses_leaves_no_line_nor_command_and_is_named(tmp_path, step):
    """The audit line was written first: a 503 then said the audit trail could not be written
    (it had been), and the trail kept a round step never sent."""
    hall = AuditedHall(tmp_path)  # noqa: F811  (a hall of its own, not the imported fixture)
    if step == "over":
        round_step_as(hall, "page-1a", None, "start", 3, "14:00", "1")
    trail = tmp_path / "audit.log"
    before, sent = trail.exists() and trail.read_bytes(), list(hall.feed.sent)
    kept = (tmp_path / "round.json").read_bytes() if step == "over" else None
    (tmp_path / "round.json.new").mkdir()  # the round's file cannot be written
    with pytest.raises(OSError) as refused:
        round_step_as(hall, "page-1a", None, step, *((3, "14:00", "1") if step == "start" else ()))
    assert said_503(refused.value) == (503, "not sent: round.json cannot be written (Is a directory)")
    assert hall.feed.sent == sent and (trail.exists() and trail.read_bytes()) == before  # nothing
    assert (tmp_path / "round.json").read_bytes() == kept if kept else not (tmp_path / "round.json").exists()


def test_a_round_file_refused_after_its_line_is_followed_by_not_sent(tmp_path, monkeypatch):
    hall = AuditedHall(tmp_path)  # noqa: F811  (a hall of its own, not the imported fixture)

    def refused(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refused)  # written aside, then cannot be put in place
    with pytest.raises(OSError) as error:
        round_step_as(hall, "page-1a", None, "start", 3, "14:00", "1")
    said = "not sent: round.json cannot be written (No space left on device)"
    assert said_503(error.value) == (503, said) and hall.feed.sent == []
    (line,) = audit_read.read(str(tmp_path))
    assert line["action"] == "round_start"
    assert audit_read.outcome_of(line, "clock-1") == {
        "state": "refused",
        "seq": None,
        "at": line["outcomes"][None]["at"],
        "reason": said,
    }
    assert sorted(os.listdir(tmp_path)) == ["audit.log"]  # no round kept, no temporary left


def test_after_a_restart_a_rounds_start_is_answered_only_by_the_clocks_it_was_sent_to(tmp_path):
    """The trail's line says `all`: read back alone, any clock could write "applied" for a start
    never sent to it; round.json names the clocks, and the restarted hall keeps to them."""
    hall = AuditedHall(tmp_path)  # noqa: F811  (a hall of its own, not the imported fixture)
    line = round_step_as(hall, "page-1a", None, "start", 3, "14:00", "1")
    (started,) = audit_read.read(str(tmp_path))
    feed = Feed()
    feed.store = type("Store", (), {"outdir": str(tmp_path)})()
    restarted = HallPage(feed, port=0)  # a restart: the trail and round.json read back
    try:
        assert restarted.rounds.current == line
        assert restarted.audit.answered("clock-2", {"ev": "set", "seq": 9, "by": started["id"]}) is None
        assert (
            restarted.audit.answered("clock-1", {"ev": "set", "seq": 9, "by": started["id"]})["outcome"]
            == "applied"
        )
    finally:
        restarted.close()
