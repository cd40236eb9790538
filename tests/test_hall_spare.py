"""A spare clock takes over a dead clock's game from the hall's page (issue 40 points 4 and 5),
on a real mosquitto: the clock dies without a word mid-game, the director moves its game to a
spare, both sides' times are the dead clock's journal's to the millisecond, the game is played to
its end on the spare and is in results.csv once."""

import csv
import glob
import json

import pytest

from conftest import tap
from support.call_hall import Hall, call_from
from support.hall_helpers import closed_after, pages_question, wait_for
from tileclock.clock.history import game_scene
from tileclock.device.screen.face import notice_text
from tileclock.director.hall.audit_read import read
from tileclock.director.records.gamefiles import load_games
from tileclock.director.records.history import iter_records
from tileclock.director.records.moved import joined
from tileclock.director.records.plot import picture


@pytest.fixture
def hall(broker, tmp_path):
    yield from closed_after(Hall(broker, tmp_path))


def cut(sim):
    """`sim`'s link to the hall gone at once (its Wi-Fi lost), the clock still running: its records
    go on into its journal, never to the broker."""
    sim.uplink._closed = True
    sim.uplink.acked_file.cancel()
    sim.uplink.client.loop_stop()
    sim.uplink.client.socket().close()
    sim.uplink.close = lambda: None


def die(clocks, clock):
    """`clock` gone at once and for good (a Pi that will not boot): no `offline`, no last save."""
    sim = clocks.sims.pop(clock)
    if not sim.uplink._closed:  # (its link may have gone first: `cut`)
        cut(sim)
    sim.journal.write_pending()
    sim.journal.close = lambda: None
    sim.close()


def dead_game_moved(hall, call=False, late=()):
    """c1 plays round 3's game at table 12 and dies mid-game (with `call`, stopped and calling the
    director; with `late`, its link lost first, then those presses, (button, seconds on), made
    and journaled but never heard), c2 (the spare) on a fresh game; the director moves c1's game
    to c2, heard back: (c1's journal as it died, the move's answer)."""
    clocks = hall.clocks
    clocks.end_game("c1")  # round 3's game at table 12 opens on c1
    hall.feed.command("set round=3 table=12", "c1")
    wait_for(lambda: any(r["ev"] == "set" for r in hall.clock_records("c1")), what="c1's set")
    clocks.open_game("c1")
    clocks.end_game("c2")  # c2 is the spare: its game over, a fresh one open
    clocks.open_game("c2")
    for t_s in (1.234, 9.871, 14.002):  # c1 plays on: B, A, B each press, A's clock runs
        tap(clocks.sims["c1"], "AB"[int(t_s) % 2], clocks.t["c1"] + t_s)
    clocks.sims["c1"].daemon.pump(clocks.sims["c1"].time())
    if call:
        clocks.t["c1"] += 15  # after the presses
        call_from(hall, "c1")
        wait_for(lambda: (hall.board("c1") or {}).get("call"), what="c1's call on the page")
    clocks.pump()
    wait_for(lambda: hall.board("c2")["state"] == "ready", what="the spare's fresh game on the page")
    dead = [r for r in iter_records(clocks.journal("c1"))]
    wait_for(lambda: hall.page.game("c1").records[-1]["seq"] == dead[-1]["seq"], what="c1's last record")
    if late:
        cut(clocks.sims["c1"])
        for button, after_s in late:
            tap(clocks.sims["c1"], button, clocks.t["c1"] + after_s)
        clocks.sims["c1"].daemon.pump(clocks.sims["c1"].time())
        dead = list(iter_records(clocks.journal("c1")))
    die(clocks, "c1")

    status, answer = hall.post("/api/board/c1/move", {"to": "c2"})
    assert status == 200, answer
    wait_for(
        lambda: any(r["ev"] == "takeover" for r in hall.clock_records("c2")), what="the spare's takeover"
    )
    return dead, answer


def test_a_dead_clocks_game_moves_to_a_spare_exact_to_the_ms_and_is_scored_once(hall):
    clocks = hall.clocks
    dead, answer = dead_game_moved(hall)
    last = dead[-1]
    (taken,) = [r for r in hall.clock_records("c2") if r["ev"] == "takeover"]
    assert (taken["from"], taken["from_seq"], taken["state"], taken["run"]) == (
        "c1",
        last["seq"],
        "paused",
        None,
    )
    for side in "AB":  # each side's time used, shown and penalty: the dead clock's journal's, to the ms
        assert taken[side] == last[side], side
    assert taken["by"] == json.loads(answer)["id"]
    # a second move of the same game is refused, never sent
    status, why = hall.post("/api/board/c1/move", {"to": "c2"})
    assert status == 409 and "not sent" in why
    # the spare plays the game to its end; results.csv has it once, with the dead clock's part
    tap(clocks.sims["c2"], "A", clocks.t["c2"] + 2)  # B runs 5 s
    clocks.t["c2"] += 7
    clocks.end_game("c2")
    clocks.pump()
    wait_for(lambda: len(rows(hall)) == 3, what="c1's first game and the spare's two in results.csv")
    row = rows(hall)[-1]
    assert int(row["A_used_ms"]) == last["A"]["used_ms"]
    assert int(row["B_used_ms"]) > last["B"]["used_ms"]
    moved = next(r for r in dead if r["ev"] == "new_game" and r.get("table") == "12")["seq"]
    assert not [r for r in rows(hall) if r["clock"] == "c1" and int(r["game_seq"]) == moved]
    assert (row["clock"], row["round"], row["table"]) == ("c2", "3", "12")  # the pairing's row
    # the sheet and `tileclock scores` read the folder's games: one game at table 12, the spare's
    found, _ = load_games([str(hall.folder)])
    tables = [(g.first["clock"], g.seq) for _, g, _ in found if game_scene(g.records)["table"] == "12"]
    assert tables == [("c2", int(row["game_seq"]))]
    # the game's picture (`tileclock plot`, the page's) reads both parts on one time line
    (spare,) = [g for _, g, _ in found if game_scene(g.records)["table"] == "12"]
    whole = picture(joined(spare, str(hall.folder)))
    limit = next(r for r in dead if r["seq"] == moved)["time_ms"]
    mark = next(m for m in whole.marks if m.label == "taken over from c1")
    assert mark.t_ms == last["t_ms"]  # the spare's part follows the dead clock's last record
    for side in "AB":  # no step where the clocks changed: each side's time left runs on
        before = [v for t, v in whole.remaining[side] if t <= last["t_ms"]]
        assert (before[0], before[-1]) == (limit[side], limit[side] - last[side]["used_ms"])
        assert whole.remaining[side][-1][1] == limit[side] - int(row[f"{side}_used_ms"])
    assert whole.end_ms == last["t_ms"] + (spare.end["t_ms"] - taken["t_ms"])
    # the spare's board page reads it so too: its records from c1's first, its slider to the end
    shown = hall.get("/api/board/c2")
    assert [(r["clock"], r["seq"]) for r in shown["records"][:1]] == [("c1", moved)]
    assert shown["end_ms"] == whole.end_ms and shown["game_seq"] == spare.seq
    # a torn line in the dead clock's file (a power cut mid-write): the spare's part drawn alone
    (dead_file,) = glob.glob(str(hall.folder / "board-*" / f"game-{taken['from_game']}-c1.log"))
    with open(dead_file, "a", encoding="ascii") as file:
        file.write('{"seq": 9')
    assert joined(spare, str(hall.folder)) is spare
    (move,) = [e for e in read(hall.folder) if e["action"] == "move"]
    assert move["changed"]["from"] == "c1" and move["clock"] == "c2"


def test_the_dead_clock_back_is_told_its_game_moved_and_its_late_records_are_kept_apart(hall):
    clocks = hall.clocks
    dead, _ = dead_game_moved(hall)
    last = dead[-1]
    moved = next(r for r in dead if r["ev"] == "new_game" and r.get("table") == "12")["seq"]
    wait_for(lambda: ("c1", moved) in hall.feed.store.moves, what="the hall to file the takeover")
    # the dead clock is restarted later: it takes its game up again from its journal, is heard,
    # and the hall tells it (audited) that the game moved; it ends the game there and says so
    clocks.sims["c1"] = clocks.start("c1")
    wait_for(  # c1's loop hands its records on when woken: once its link is up, on a loaded machine too
        lambda: (clocks.pump(), any(r["ev"] == "moved" for r in hall.clock_records("c1")))[-1],
        what="c1 told of the move",
    )
    back = [r for r in hall.clock_records("c1") if r["seq"] > last["seq"]]
    (told,) = [r for r in back if r["ev"] == "moved"]
    assert (told["game_seq"], told["to"], told["state"], told["run"]) == (moved, "c2", "ended", None)
    (line,) = [e for e in read(hall.folder) if e["action"] == "moved"]
    assert (line["by"], line["clock"], line["changed"]) == ("hall", "c1", {"game": moved, "to": "c2"})
    assert told["by"] == line["id"]
    assert clocks.sims["c1"].view().notice.kind == "moved"
    assert notice_text(clocks.sims["c1"].view().notice) == "GAME MOVED"
    # no more time on that game: a press there starts no clock, both sides stay as they were
    clocks.t["c1"] = clocks.sims["c1"].time() / 1e9
    tap(clocks.sims["c1"], "A", clocks.t["c1"] + 1)
    tap(clocks.sims["c1"], "B", clocks.t["c1"] + 3)
    clocks.sims["c1"].run_to(clocks.sims["c1"].time() + 5 * 10**9)
    after = hall.clock_records("c1")[-1]
    assert after["state"] == "ended"
    assert [after[side]["used_ms"] for side in "AB"] == [told[side]["used_ms"] for side in "AB"]
    # the hall keeps what c1 sent after the move apart, marked, and counts none of it
    (game_file,) = hall.folder.glob(f"board-*/game-{moved}-c1.log")
    kept = [r["seq"] for r in iter_records(str(game_file))]
    assert kept[-1] == last["seq"]  # the game's file ends where the spare took it up
    later = game_file.parent / f"after-move-{moved}-c1.log"
    wait_for(
        lambda: later.exists() and told["seq"] in [r["seq"] for r in iter_records(str(later))],
        what="c1's late records on file",
    )
    apart = list(iter_records(str(later)))
    assert all(r["seq"] > last["seq"] for r in apart) and {r["ev"] for r in apart} >= {"boot", "moved"}
    assert any("after-move" in text and "c2" in text for _, text in hall.feed.store.notices)

    def said():
        return next(e for e in read(hall.folder) if e["id"] == line["id"]).get("outcomes")

    wait_for(said, what="the outcome of the hall's word to c1")
    assert (said()["c1"]["outcome"], said()["c1"]["seq"]) == ("applied", told["seq"])
    # the spare ends the game: results.csv has it once, the spare's; none of c1's for it
    tap(clocks.sims["c2"], "A", clocks.t["c2"] + 2)
    clocks.t["c2"] += 7
    clocks.end_game("c2")
    clocks.pump()
    wait_for(lambda: len(rows(hall)) == 3, what="the spare's row in results.csv")
    assert [r["clock"] for r in rows(hall) if r["table"] == "12"] == ["c2"]
    assert not [r for r in rows(hall) if r["clock"] == "c1" and int(r["game_seq"]) == moved]
    # a hall restarted reads the move back: the late records stay apart, c1's game file as it was
    hall.close()
    hall.start()
    assert hall.feed.store.moves[("c1", moved)] == ("c2", last["seq"])
    assert [r["seq"] for r in iter_records(str(game_file))] == kept


def test_presses_the_hall_never_heard_before_the_move_are_flagged_not_counted(hall):
    """c1 loses its link, its players press on (B, then A), and it dies: the spare takes the game
    up where the hall heard c1 last. c1 restarted sends those presses: the trail, the notices and
    both boards say what they add, to the ms of c1's journal; the spare's time is as it was."""
    clocks = hall.clocks
    dead, _ = dead_game_moved(hall, late=(("B", 20.5), ("A", 27.75)))
    (taken,) = [r for r in hall.clock_records("c2") if r["ev"] == "takeover"]
    pressed = [r for r in dead if r["seq"] > taken["from_seq"] and r["ev"] == "switch"][-1]
    more = {side: pressed[side]["used_ms"] - taken[side]["used_ms"] for side in "AB"}
    assert all(more.values())  # each side used time the spare does not know
    clocks.sims["c1"] = clocks.start("c1")

    def said():  # the trail's line is written first, then the notice
        return [text for _, text in hall.feed.store.notices if "late records show" in text]

    wait_for(lambda: (clocks.pump(), said())[-1], what="c1's late presses said")
    (line,) = [e for e in read(hall.folder) if e["action"] == "late_records"]
    assert (line["by"], line["clock"], line.get("command")) == ("hall", "c1", None)
    times = {f"{side}_ms": more[side] for side in "AB"}
    assert line["changed"] == {"game": taken["from_game"], "to": "c2", "seq": pressed["seq"], **times}
    (notice,) = said()
    assert notice.startswith("board 1: the dead clock's late records show A used"), notice
    assert hall.board("c1")["moved"]["late"]["A_ms"] == more["A"]
    assert hall.board("c2")["took_over"]["late"]["B_ms"] == more["B"]
    assert [hall.board("c2")[side]["used_ms"] for side in "AB"] == [taken[s]["used_ms"] for s in "AB"]
    assert not [r for r in hall.clock_records("c2") if r["ev"] == "adjust"]  # no time changed


def test_a_hall_restarted_tells_the_dead_clock_its_game_moved_once_on_the_trail(hall):
    """The hall tells the dead clock back, and is restarted before the clock has it (the word
    lost with the hall): the hall started again says the same word, never a second audit line."""
    clocks = hall.clocks
    dead, _ = dead_game_moved(hall)
    last = dead[-1]
    moved = next(r for r in dead if r["ev"] == "new_game" and r.get("table") == "12")["seq"]
    wait_for(lambda: ("c1", moved) in hall.feed.store.moves, what="the hall to file the takeover")
    lost, command = [], hall.feed.command
    hall.feed.command = lambda text, *args, **kw: (
        lost.append(text) if text.startswith("moved") else command(text, *args, **kw)
    )
    clocks.sims["c1"] = clocks.start("c1")
    wait_for(lambda: (clocks.pump(), lost)[-1], what="the hall's word to c1")  # c1 hands on once connected
    (line,) = [e for e in read(hall.folder) if e["action"] == "moved"]
    hall.close()
    hall.start()
    assert not [r for r in hall.clock_records("c1") if r["ev"] == "moved"]  # c1 never had it
    clocks.t["c1"] = clocks.sims["c1"].time() / 1e9
    tap(clocks.sims["c1"], "A", clocks.t["c1"] + 1)  # c1 heard again, by the hall started again
    clocks.sims["c1"].daemon.pump(clocks.sims["c1"].time())
    wait_for(
        lambda: (clocks.pump(), any(r["ev"] == "moved" for r in hall.clock_records("c1")))[-1],
        what="c1 told of the move",
    )
    (told,) = [r for r in hall.clock_records("c1") if r["ev"] == "moved"]
    assert (told["game_seq"], told["to"], told["by"], told["seq"] > last["seq"]) == (
        moved,
        "c2",
        line["id"],
        True,
    )
    assert [e["id"] for e in read(hall.folder) if e["action"] == "moved"] == [line["id"]]  # once
    assert notice_text(clocks.sims["c1"].view().notice) == "GAME MOVED"


def test_an_open_call_moves_with_the_game_and_is_answered_on_the_spare(hall):
    """c1 dies while its players wait on the director: the spare shows the call still open, the
    page shows it open on the spare's board, and the director's answers there reach the spare."""
    clocks = hall.clocks
    dead, _ = dead_game_moved(hall, call=True)
    (raised,) = [r for r in dead if r["ev"] == "call"]
    (taken,) = [r for r in hall.clock_records("c2") if r["ev"] == "takeover"]
    assert (taken["call"], taken["call_taken"]) == (raised["seq"], False)
    assert clocks.sims["c2"].view().call == "called"  # the spare's panels: CALLED TD
    wait_for(lambda: (hall.board("c2") or {}).get("call"), what="the call on the spare's board")
    assert (hall.board("c2")["call"]["seq"], hall.board("c2")["call"]["state"]) == (raised["seq"], "called")
    status, answer = hall.post("/api/board/c2/call", {"call": raised["seq"], "answer": "taken"})
    assert status == 200, answer
    wait_for(lambda: spares_call(hall)["state"] == "taken", what="the page to show it taken")
    assert clocks.sims["c2"].view().call == "taken"  # TD COMING, on the spare
    status, answer = hall.post("/api/board/c2/call", {"call": raised["seq"], "answer": "done"})
    assert status == 200, answer
    wait_for(lambda: spares_call(hall) is None, what="the call closed on the page")
    assert clocks.sims["c2"].view().call is None
    answers = [r for r in hall.clock_records("c2") if r["ev"] == "call_answer"]
    trail = [e for e in read(hall.folder) if e["action"] == "call"]
    assert [(r["call"], r["answer"]) for r in answers] == [(raised["seq"], "taken"), (raised["seq"], "done")]
    assert [(e["clock"], e["changed"]["answer"]) for e in trail] == [("c2", "taken"), ("c2", "done")]
    assert [r["by"] for r in answers] == [e["id"] for e in trail]  # each answer the trail's action


def spares_call(hall):
    """The call the page shows on the spare's board, once the spare has answered what it was sent."""
    hall.clock_records("c2")  # the clocks' loops answer their commands and hand their records on
    return hall.board("c2")["call"]


def test_the_boards_move_button_moves_its_game_to_the_spare_typed_in_once_confirmed(hall, page):
    """The dead board's page in chromium: the spare typed in, the page's own question answered
    (No sends nothing; Yes moves it), the answer shown; a second move is refused, in words. The
    dead clock had lost its link before it died, with presses on it: back, the spare's page
    offers the correction for the time they show, and sends it only once asked."""
    clocks = hall.clocks
    clocks.end_game("c2")  # c2 is the spare: a fresh game open
    clocks.open_game("c2")
    clocks.pump()
    wait_for(lambda: hall.board("c2")["state"] == "ready", what="the spare's fresh game on the page")
    dead = list(iter_records(clocks.journal("c1")))
    wait_for(lambda: hall.page.game("c1").records[-1]["seq"] == dead[-1]["seq"], what="c1's last record")
    cut(clocks.sims["c1"])  # its link lost: A's press runs B's clock, B's ends it; never heard
    tap(clocks.sims["c1"], "A", clocks.t["c1"] + 1)
    tap(clocks.sims["c1"], "B", clocks.t["c1"] + 8.25)
    clocks.sims["c1"].daemon.pump(clocks.sims["c1"].time())
    die(clocks, "c1")
    page.goto(hall.page.address + "board/c1")
    page.locator("#records tr").first.wait_for()
    page.click("#internals summary")  # "This clock, for a technician": where the move is
    page.fill("#spare", "c2")
    page.click("#move")
    question = pages_question(page, yes=False)
    assert "clock c1's game to clock c2" in question
    assert not [e for e in read(hall.folder) if e["action"] == "move"]  # No: nothing sent nor audited
    page.click("#move")
    pages_question(page)
    wait_for(lambda: page.inner_text("#moved").startswith("sent: "), what="the page to show the answer")
    assert page.inner_text("#moved").startswith("sent: takeover c1 ")
    wait_for(
        lambda: any(r["ev"] == "takeover" for r in hall.clock_records("c2")), what="the spare's takeover"
    )
    (taken,) = [r for r in hall.clock_records("c2") if r["ev"] == "takeover"]
    (move,) = [e for e in read(hall.folder) if e["action"] == "move"]
    assert (taken["from"], taken["from_seq"], taken["by"]) == ("c1", dead[-1]["seq"], move["id"])
    # the dead clock's board says where its game went (its calls and time are the spare's now)
    wait_for(lambda: "game moved to clock c2" in page.inner_text("#move-note"), what="the board's note")
    (cookie,) = page.context.cookies()  # the move is the tab's session's, on the trail
    assert move["by"] == hall.page.sessions.label(cookie["value"])
    page.click("#move")  # again: refused (c2 plays it now), the page says why
    pages_question(page)
    wait_for(lambda: "not sent" in page.inner_text("#moved"), what="the refusal on the page")
    assert page.inner_text("#moved").startswith("not sent: clock c2 is in a game")  # the one it took
    assert len([e for e in read(hall.folder) if e["action"] == "move"]) == 1
    # c1 back: its late presses are on the spare's page, with the correction, sent once asked
    clocks.sims["c1"] = clocks.start("c1")
    wait_for(lambda: (clocks.pump(), hall.board("c2")["took_over"]["late"])[-1], what="the late time")
    late = hall.board("c2")["took_over"]["late"]
    seconds = round(late["B_ms"] / 1000)
    assert late["A_ms"] == 0 and seconds >= 7 and late["words"] == f"B used 0:{seconds:02d} more"
    page.goto(hall.page.address + "board/c2")
    fix = page.locator("#late-fix button")
    fix.wait_for()
    assert f"late records show {late['words']} before the move" in page.inner_text("#move-note")
    assert fix.inner_text() == f"B −0:{seconds:02d}"  # the one side that used more
    fix.click()
    assert f"Correct B by −0:{seconds:02d}" in pages_question(page)
    wait_for(
        lambda: (clocks.pump(), [r for r in hall.clock_records("c2") if r["ev"] == "adjust"])[-1],
        what="the spare's correction",
    )
    (given,) = [r for r in hall.clock_records("c2") if r["ev"] == "adjust"]
    (line,) = [e for e in read(hall.folder) if e["action"] == "adjust"]
    assert (given["player"], given["delta_ms"], given["by"]) == ("B", -seconds * 1000, line["id"])


def spare_ready(hall):
    """c2 the spare: its game over, a fresh one open, on the page."""
    hall.clocks.end_game("c2")
    hall.clocks.open_game("c2")
    hall.clocks.pump()
    wait_for(lambda: hall.board("c2")["state"] == "ready", what="the spare's fresh game on the page")


def moved_already(hall):
    """c1's game moved to c2, and c2 on a fresh game again (the move the page sent is known)."""
    spare_ready(hall)
    status, answer = hall.post("/api/board/c1/move", {"to": "c2"})
    assert status == 200, answer
    wait_for(lambda: any(r["ev"] == "takeover" for r in hall.clock_records("c2")), what="the takeover")
    spare_ready(hall)


@pytest.mark.parametrize(
    ("setup", "path", "form", "status", "words"),
    [
        (spare_ready, "c1", {"to": "c9"}, 409, "clock c9 is not online"),  # no such spare
        (spare_ready, "c1", {"to": "c1"}, 409, "to the clock it is on"),
        (lambda hall: None, "c1", {"to": "c2"}, 409, "clock c2 is in a game"),  # the spare plays one
        (moved_already, "c1", {"to": "c2"}, 409, "taken over by clock c2 already"),
        (spare_ready, "c9", {"to": "c2"}, 409, "holds no game of clock c9"),  # no such dead clock
        (spare_ready, "c1", {"to": "c2;rm"}, 400, "the spare clock's id"),
        (spare_ready, "c1", {"to": "c2\r\nset round=9"}, 400, "the spare clock's id"),
        (spare_ready, "c1", {"to": "<b>c2</b>"}, 400, "the spare clock's id"),
        (spare_ready, "c1", {"to": "c2" + "0" * 40}, 400, "1 to 32"),  # over-long: never cut short
        (spare_ready, "c1", {"to": ""}, 400, "the spare clock's id"),
        (spare_ready, "c1", {}, 400, "the spare clock's id"),
        (spare_ready, "c1", [("to", "c2"), ("to", "c1")], 400, "once"),  # two spares
        (spare_ready, "c1%3Bx", {"to": "c2"}, 404, "no such clock"),  # bad characters in the path
        (spare_ready, "c" * 40, {"to": "c2"}, 404, "no such clock"),  # an over-long dead clock's id
    ],
    ids=[
        "no-such-spare", "same-clock", "spare-in-a-game", "moved-already", "no-such-dead-clock",
        "semicolon", "line-break", "markup", "over-long", "empty", "missing", "twice", "bad-path",
        "long-path",
    ],
)  # fmt: skip  # a case a line
def test_a_move_refused_is_a_clear_4xx_with_nothing_sent_nor_audited(hall, setup, path, form, status, words):
    setup(hall)
    trail, before = read(hall.folder), {c: len(hall.clock_records(c)) for c in ("c1", "c2")}
    sent, command = [], hall.feed.command
    hall.feed.command = lambda text, *args, **kw: (sent.append(text), command(text, *args, **kw))[1]
    got, why = hall.post(f"/api/board/{path}/move", form)
    assert (got, words in why) == (status, True), why
    assert sent == [] and read(hall.folder) == trail  # nothing sent, nothing audited
    for clock in ("c1", "c2"):  # nor did either clock make a record of one
        made = hall.clock_records(clock)[before[clock] :]
        assert not [r for r in made if r["ev"] in ("takeover", "set", "error", "moved")], made


def rows(hall):
    path = hall.folder / "results.csv"
    if not path.exists():
        return []
    with open(path, newline="") as file:
        return list(csv.DictReader(file))
