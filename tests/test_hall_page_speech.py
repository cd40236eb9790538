"""Speech from the hall's page (issue 43), in a real headless chromium: a board's page shows who
hears its clock as the clock's state says it, and turns speech on for side A, B, both or off with
the director's audited `set speech=`; the clock speaks to that side from then on. The large-digits
face likewise, with `set large=`: that side's panel shows it at once. A bad side is refused with a
400 saying what is taken, and nothing is sent."""

from conftest import tap
from support.call_hall import Hall
from support.feeds import Feed
from support.hall_helpers import pages_question, wait_for
from support.page_hall import hall  # noqa: F401 - the fixture: three clocks, the feed, the page
from tileclock.director.hall.audit_read import read
from tileclock.director.pages.web import HallPage


def test_a_boards_page_turns_speech_on_for_a_side_and_shows_it(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    sim = clocks.sims["c1"]
    heard = []
    sim.daemon.speaker._say = lambda utterance, t_ns: heard.append(utterance.side)  # no sound card here
    now = page.locator("#speech-now")
    page.goto(server.address + "board/c1")
    wait_for(lambda: clocks.pump() or now.inner_text() == "off", what="speech off, as the clock says")
    page.click('#speech button[data-sides="B"]')
    question = pages_question(page)
    name = next(b["board"] for b in feed.snapshot()["boards"] if b["clock"] == "c1")
    assert question.startswith("Speech for side B only") and question.endswith(f" on Board {name}?")
    page.locator("#sent").get_by_text("set speech=B").wait_for()
    wait_for(lambda: clocks.pump() or sim.clock.scene.speech == "B", what="the clock took it")
    (record,) = [r for r in sim.journal.records() if r["ev"] == "set"]
    assert record["speech"] == "B" and record["source"] == "hall" and record["by"]
    wait_for(lambda: clocks.pump() or now.inner_text() == "side B hears", what="the page says B hears")
    pressed = page.locator('#speech button[aria-pressed="true"]')
    assert pressed.count() == 1 and pressed.get_attribute("data-sides") == "B"
    # B's clock runs: A ends nothing yet; B passes the turn, then asks for its time
    t_s = clocks.t["c1"]
    tap(sim, "B", t_s + 1)
    tap(sim, "B", t_s + 2)
    wait_for(lambda: heard, what="B hears its time")
    assert set(heard) == {"B"}
    trail = page.locator("#actions-on-file tr", has_text="speech: side B hears")
    wait_for(lambda: clocks.pump() or "applied" in trail.inner_text(), what="the trail says it took")
    (entry,) = [e for e in read(str(feed.store.outdir)) if e["action"] == "speech"]
    assert entry["changed"] == {"speech": "B"} and entry["command"].startswith("set speech=B by=")
    assert page.locator("#recorded tr", has_text="set speech B").count() == 1  # as the clock recorded it

    page.click('#speech button[data-sides="off"]')
    assert "Speech off" in pages_question(page)
    wait_for(lambda: clocks.pump() or now.inner_text() == "off", what="the page says speech is off")
    assert sim.clock.scene.speech == ""


def test_a_boards_page_turns_the_large_face_on_for_a_side_and_shows_it(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    sim = clocks.sims["c1"]
    now = page.locator("#large-now")
    page.goto(server.address + "board/c1")
    wait_for(lambda: clocks.pump() or now.inner_text() == "off", what="large digits off, as the clock says")
    page.click('#large button[data-sides="A"]')
    assert pages_question(page).startswith("Large digits on side A's panel only")
    page.locator("#sent").get_by_text("set large=A").wait_for()
    wait_for(lambda: clocks.pump() or now.inner_text() == "side A", what="the page says A has it")
    assert [r["large"] for r in sim.journal.records() if r["ev"] == "set"] == ["A"]
    wait_for(
        lambda: clocks.pump() or [o.panel.large for o in sim.panels] == [True, False], what="A's panel large"
    )
    pressed = page.locator('#large button[aria-pressed="true"]')
    assert pressed.count() == 1 and pressed.get_attribute("data-sides") == "A"
    trail = page.locator("#actions-on-file tr", has_text="large digits: side A")
    wait_for(lambda: clocks.pump() or "applied" in trail.inner_text(), what="the trail says it took")
    (entry,) = [e for e in read(str(feed.store.outdir)) if e["action"] == "large"]
    assert entry["changed"] == {"large": "A"} and entry["command"].startswith("set large=A by=")
    assert page.locator("#recorded tr", has_text="set large A").count() == 1  # as the clock recorded it


def test_a_bad_side_is_refused_with_what_is_taken_and_nothing_is_sent(tmp_path):
    feed = Feed(tmp_path)
    server = HallPage(feed, port=0).start()
    try:
        hall = type("Hall", (), {"page": server, "tabs": {}, "tab": Hall.tab})()  # no clocks: its page
        for action in ("speech", "large"):
            for sides in ("ba", "b", "C", "", "A B", "both", "AB;reboot", "off\nset", "AAB", None):
                form = {"action": action} if sides is None else {"action": action, "sides": sides}
                status, text = Hall.post(hall, "/api/board/c1/command", form)
                assert (status, text) == (400, f"{action}: sides A, B, AB or off (once)"), sides
        assert feed.sent == [] and read(str(tmp_path)) == []  # neither sent nor on the trail
        assert Hall.post(hall, "/api/board/c1/command", {"action": "speech", "sides": "AB"})[0] == 200
        assert feed.sent == [feed.sent[0]] and feed.sent[0].startswith("set speech=AB by=")
    finally:
        server.close()
