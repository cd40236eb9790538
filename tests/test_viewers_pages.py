"""The spectators' page and the stream overlay in Debian's chromium, on both real brokers: what they
show (screenshot goldens at 1920x1080), that they count between states, that they show stale when
they stop receiving, and that a hostile state shows nothing (docs/hall.md, "Spectators").

Goldens live in tests/golden/viewers-*.png. To change the layout on purpose, run
`TILECLOCK_REGOLD=1 .venv/bin/python -m pytest tests/test_viewers_pages.py`, look at the new PNGs, and commit them.
"""

import json
import os
import re
from dataclasses import replace

import paho.mqtt.client as mqtt
import pytest
from PIL import Image, ImageChops

from conftest import BROKER_USERS, tap
from support.hall_helpers import hall_config, wait_for
from tileclock.clock.timecode import NS_PER_MS
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config_schema import Config
from tileclock.sim.simulator import Simulator

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
SCENE = {"width": 1920, "height": 1080}
#: the page's time of day in the goldens: 25:20 into the clocks' virtual time
AT_MS = SIM_EPOCH_NS // NS_PER_MS + 1_520_000


def board(broker, tmp_path, clock, name):
    config = replace(Config(clock_id=clock, board=name), hall=hall_config(broker, clock))
    return Simulator(config, state_dir=str(tmp_path / clock), refresh_on_ticks=False)


def published(sims):
    """Pump until each clock's newest public state is on the broker (the uplink says so)."""

    def done():
        for sim in sims:
            sim.daemon.pump(sim.time())
        return all(sim.uplink._state._public_sent == sim.uplink._state._public_text for sim in sims)

    wait_for(done, what="the public states")


@pytest.fixture
def hall(broker, viewers_broker, tmp_path):
    """Three boards: 12 in play (A went 10 s into overtime, B runs), 7 stopped and calling the
    director, 3 not started."""
    sims = [board(broker, tmp_path, c, n) for c, n in (("c1", "12"), ("c2", "7"), ("c3", "3"))]
    tap(sims[0], "B", 0)
    tap(sims[0], "A", 1510)  # A used 25:10: -0:10, 10 points
    tap(sims[1], "B", 2)
    tap(sims[1], "A", 62)
    tap(sims[1], "STOP", 100)
    for t_s in (103, 103.5, 104):  # three STOP taps within 2 s on the stopped clock: a call
        tap(sims[1], "STOP", t_s)
    for sim in sims:
        sim.run_to(max(s.time() for s in sims))
    published(sims)
    yield sims
    for sim in sims:
        sim.close()


def open_page(browser, viewers_broker, path, at_ms=AT_MS):
    # Playwright's waits evaluate text, which the pages' policy forbids: a test sees the script without it
    context = browser.new_context(viewport=SCENE, bypass_csp=True)
    page = context.new_page()
    page.clock.set_fixed_time(at_ms / 1000)
    page.goto(viewers_broker.address + path)
    return page


def shown(page, board_name):
    card = page.locator("section.board", has_text=f"Board {board_name}")
    return card.locator(".side-A .time").inner_text(), card.locator(".side-B .time").inner_text()


def matches_golden(page, name, transparent=False):
    path = os.path.join(GOLDEN, f"viewers-{name}.png")
    shot = os.path.join(os.path.dirname(path), f".viewers-{name}.new.png")
    page.screenshot(path=shot, omit_background=transparent)
    if os.environ.get("TILECLOCK_REGOLD"):
        os.replace(shot, path)
    new, old = Image.open(shot if os.path.exists(shot) else path), Image.open(path)
    assert new.size == old.size == (1920, 1080)
    differ = (
        ImageChops.difference(new.convert("RGBA"), old.convert("RGBA")).convert("L").point(lambda v: v > 40)
    )
    share = sum(differ.histogram()[1:]) / (1920 * 1080)
    assert share < 0.002, f"{path} differs in {share:.2%} of its pixels: see {shot} and the module docstring"
    if os.path.exists(shot):
        os.remove(shot)


def test_the_spectators_page_shows_every_board_as_the_clocks_do(browser, hall, viewers_broker):
    page = open_page(browser, viewers_broker, "")
    page.wait_for_function("document.querySelectorAll('section.board').length === 3")
    assert shown(page, "12") == ("-0:10", "24:50")  # B has run 10 s since A's press at 25:10
    assert shown(page, "7") == ("24:00", "24:22")
    card = page.locator("section.board", has_text="Board 12")
    assert card.locator(".side-B .mark").inner_text() == "\u25b6 TO PLAY"
    assert card.locator(".side-A .overtime").inner_text() == "OVERTIME"
    assert card.locator(".side-A .pen").inner_text() == "\u221210 pts"
    seven = page.locator("section.board", has_text="Board 7")
    assert seven.locator(".status").inner_text() == "STOPPED"
    # its call shows as a mark the hall can read, and nothing on the page answers it
    assert seven.locator(".call").inner_text() == "\u260e DIRECTOR CALLED"
    assert page.locator("section.board.calling").count() == 1
    # nothing on the page to act on, and framed by no one (the spectators' door's headers: docs/hall.md,
    # "The spectators' door")
    controls = "button, form, input, select, textarea, [onclick], [tabindex], [contenteditable]"
    assert page.locator(controls).count() == 0
    links = page.locator("a[href]").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert len(links) == 3 and all(href.startswith("?board=") for href in links)  # one board large
    answer = page.context.request.get(viewers_broker.address)
    assert answer.ok and answer.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    policy = page.locator("meta[http-equiv=Content-Security-Policy]").get_attribute("content")
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert page.locator("section.board", has_text="Board 3").locator(".status").inner_text() == "READY"
    matches_golden(page, "boards")
    # one board large: ?board= its name or clock id
    page.goto(viewers_broker.address + "?board=12")
    page.wait_for_function("document.querySelectorAll('section.board.large').length === 1")
    assert shown(page, "12") == ("-0:10", "24:50")
    page.context.close()


def test_the_overlay_fits_a_1920x1080_scene_with_a_transparent_background(browser, hall, viewers_broker):
    page = open_page(browser, viewers_broker, "overlay.html?board=c1&a=Alice%20Ames&b=Bob%20Bell")
    page.wait_for_selector(".bar")
    assert page.locator(".side-A .label").inner_text() == "Alice Ames"
    assert page.locator(".side-B .time").inner_text() == "24:50"
    # measured in one step: the bar is drawn anew on each state, so a locator's box can miss it
    x, y, width, height = page.evaluate(
        "(() => { const r = document.querySelector('.bar').getBoundingClientRect();"
        " return [r.x, r.y, r.width, r.height]; })()"
    )
    assert x >= 0 and y >= 0 and x + width <= 1920 and y + height <= 1080
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert page.locator(".call").count() == 0  # board 12 has not called
    matches_golden(page, "overlay", transparent=True)
    page.goto(viewers_broker.address + "overlay.html?board=7")  # the board that called
    page.locator(".middle .call", has_text="DIRECTOR CALLED").wait_for()
    page.context.close()


def test_it_counts_between_states_and_goes_stale(browser, hall, broker, viewers_broker):
    page = open_page(browser, viewers_broker, "")
    page.wait_for_function("document.querySelectorAll('section.board').length === 3")
    page.clock.set_fixed_time((AT_MS + 61_500) / 1000)  # no state comes: the page counts B on
    page.wait_for_function("document.body.innerText.includes('23:49')")
    assert shown(page, "12") == ("-0:10", "23:49") and shown(page, "7") == ("24:00", "24:22")
    broker.stop()  # the hall's broker gone: the spectators' broker says its bridge is down
    page.wait_for_selector("body.is-stale", timeout=15_000)
    assert "hall's broker is out of reach" in page.locator("#note").inner_text()
    page.clock.set_fixed_time((AT_MS + 120_000) / 1000)
    page.evaluate("tileclockViewer.draw()")
    assert shown(page, "12") == ("-0:10", "23:49")  # frozen where it stopped receiving, not counting on
    assert page.locator("section.board.stale").count() == 3
    broker.start()
    page.wait_for_function("!document.body.classList.contains('is-stale')", timeout=15_000)
    # the hall's broker going down also marked each clock offline (their wills), which freezes a
    # board by itself: wait until they are back, so that only the lost connection can freeze it
    page.wait_for_function("document.querySelectorAll('section.board.stale').length === 0", timeout=15_000)
    assert shown(page, "12") == ("-0:10", "22:50")  # counting again: B's state is from 25:10
    viewers_broker.stop()  # the page's own broker gone
    page.wait_for_selector("body.is-stale", timeout=15_000)
    assert "connection to the hall is lost" in page.locator("#note").inner_text()
    page.clock.set_fixed_time((AT_MS + 180_000) / 1000)
    page.evaluate("tileclockViewer.draw()")
    assert shown(page, "12") == ("-0:10", "22:50")  # frozen at the moment the connection went
    page.context.close()


def test_a_hostile_public_state_shows_nothing_and_runs_nothing(browser, hall, broker, viewers_broker):
    page = open_page(browser, viewers_broker, "")
    page.wait_for_function("document.querySelectorAll('section.board').length === 3")
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="c4")
    client.username_pw_set("c4", BROKER_USERS["c4"])
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    good = json.loads(hall[2].uplink._state._public_text)
    hostile = [
        {**good, "clock": "c4", "board": "<img src=x onerror=window.owned=1>"},
        {**good, "clock": "c4", "A": {"left_ms": "1e309", "shown": "25:00", "pen": 0}},
        {**good, "clock": "c1"},  # on c4's topic, naming another clock
        {**good, "clock": "c4", "boot": {"id": [1]}},
        {**good, "clock": "c4", "boot": "b" * 65},
        {**good, "clock": "c4", "call": "<b>CALL</b>"},  # a call is called, taken or null
        {**good, "clock": "c4", "call": {"state": "called"}},
        {**good, "clock": "c4", "start_ms": "14:00"},
        {**good, "clock": "c4", "start_ms": 10**20},
        {**good, "clock": "c4", "ended": ["round_over"]},
        "not json {",
        "x" * 5000,
    ]
    for payload in hostile:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        if payload is not hostile[2]:  # c1's own state: refused for its topic, not its shape
            assert page.evaluate("(text) => TileclockCount.parse(text)", text) is None, text[:80]
        took = "(t) => { tileclockViewer.take('tileclock/c4/public', t, false); return tileclockViewer.boards.has('c4'); }"
        assert page.evaluate(took, text) is False, text[:80]
        client.publish("tileclock/c4/public", text, qos=1).wait_for_publish(5)
    client.publish(
        "tileclock/c4/public", json.dumps({**good, "clock": "c4", "board": "44"}), qos=1
    ).wait_for_publish(5)
    page.wait_for_function("document.body.innerText.includes('Board 44')")
    assert page.locator("section.board").count() == 4
    assert page.evaluate("window.owned") is None and page.locator("img").count() == 0
    client.loop_stop()
    page.context.close()


def test_a_clock_gone_offline_shows_stale_alone_and_stops_counting(browser, hall, viewers_broker):
    page = open_page(browser, viewers_broker, "")
    page.wait_for_function("document.querySelectorAll('section.board').length === 3")
    assert shown(page, "12") == ("-0:10", "24:50")
    hall[0].uplink.close()  # board 12's clock says `offline` as it goes (its will, if it dies)
    board = page.locator("section.board", has_text="Board 12")
    board.locator(".status-stale").wait_for()
    page.clock.set_fixed_time((AT_MS + 60_000) / 1000)
    page.evaluate("tileclockViewer.draw()")  # B would show 23:50 if it counted on
    assert shown(page, "12") == ("-0:10", "24:50")
    assert page.locator("section.board.stale").count() == 1
    # a page opened later knows only that it is offline: it shows the clock's last state as it was made
    later = open_page(browser, viewers_broker, "", at_ms=AT_MS + 600_000)
    later.locator("section.board", has_text="Board 12").locator(".status-stale").wait_for()
    assert shown(later, "12") == ("-0:10", "25:00")
    page.context.close()
    later.context.close()


def test_a_new_card_shows_though_its_seqs_start_again(browser, hall, broker, viewers_broker, tmp_path):
    page = open_page(browser, viewers_broker, "")
    page.wait_for_function("document.querySelectorAll('section.board').length === 3")
    assert shown(page, "12") == ("-0:10", "24:50")
    old = json.loads(hall[0].uplink._state._public_text)
    hall[0].close()
    # the same clock id on a new card: a fresh journal, a new boot; its seqs start again, lower
    config = replace(Config(clock_id="c1", board="12"), hall=hall_config(broker, "c1"))
    hall[0] = Simulator(config, state_dir=str(tmp_path / "c1-new-card"), refresh_on_ticks=False)
    published(hall[:1])
    new = json.loads(hall[0].uplink._state._public_text)
    assert new["seq"] < old["seq"] and new["boot"] != old["boot"]
    # its ready game shows, not the old card's last state until the page is reloaded
    page.locator("section.board", has_text="Board 12").locator(".status-ready").wait_for(timeout=15_000)
    assert shown(page, "12") == ("25:00", "25:00")
    # within one boot a lower seq is still an old copy sent again: the newer state stands
    again = json.dumps({**new, "seq": new["seq"] + 5, "state": "paused"})
    page.evaluate("(t) => tileclockViewer.take('tileclock/c1/public', t, false)", again)
    page.evaluate("(t) => tileclockViewer.take('tileclock/c1/public', t, false)", json.dumps(new))
    page.evaluate("tileclockViewer.draw()")
    card = page.locator("section.board", has_text="Board 12")
    assert card.locator(".status").inner_text() == "STOPPED"
    page.context.close()


def running_state(clock, seq, at_ms):
    """A public state of `clock`: A runs with 20:00 left at `at_ms` (that clock's wall time)."""
    side = {"left_ms": 1_200_000, "shown": "20:00", "pen": 0, "runs": True}
    state = {"v": 2, "clock": clock, "board": clock, "round": None, "table": None, "seq": seq}
    state.update(state="running", run="A", at_ms=at_ms, cap_s=600, A=side)
    state["B"] = {**side, "runs": False}
    return json.dumps(state)


def test_each_board_counts_right_whatever_its_pi_s_wall_clock_says(browser, viewers_broker):
    # three Pis: one synced, one 2 h ahead, one 3 h behind (no RTC, no network time); each state
    # arrives 40 ms after it was made
    page = open_page(browser, viewers_broker, "")
    hour = 3_600_000
    for clock, off in (("synced", 0), ("ahead", 2 * hour), ("behind", -3 * hour)):
        for seq in (1, 2):
            state = running_state(clock, seq, AT_MS - 40 + off)
            page.evaluate(
                "([c, s]) => tileclockViewer.take('tileclock/' + c + '/public', s, false)", [clock, state]
            )
    page.evaluate("tileclockViewer.draw()")
    assert [shown(page, c) for c in ("synced", "ahead", "behind")] == [("20:00", "20:00")] * 3
    page.clock.set_fixed_time((AT_MS + 61_000) / 1000)
    page.evaluate("tileclockViewer.draw()")
    assert [shown(page, c) for c in ("synced", "ahead", "behind")] == [("18:59", "20:00")] * 3
    page.context.close()


def test_a_page_that_never_connected_says_connecting_not_lost(browser, viewers_broker):
    """Before its first connection the spectators' page says it is connecting: "the connection to
    the hall is lost" is for a connection it had (the broker's WebSocket here refused each time)."""
    context = browser.new_context(viewport=SCENE, bypass_csp=True)
    page = context.new_page()
    page.route_web_socket("**/*", lambda socket: socket.close())
    page.goto(viewers_broker.address)
    note = page.locator("#note")
    note.filter(has_text="Connecting to the hall").wait_for()
    assert "lost" not in note.inner_text()
    context.close()


def test_a_rounds_start_time_says_began_once_it_has_passed(browser, viewers_broker):
    """A board waiting for its round shows STARTS 14:00:05; once that time has passed by its
    clock (nobody has pressed yet), ROUND BEGAN, never a start still to come."""
    page = open_page(browser, viewers_broker, "")
    state = json.loads(running_state("c9", 1, AT_MS))
    state.update(state="ready", run=None, start_ms=AT_MS + 5_000)
    for side in "AB":
        state[side]["runs"] = False
    page.evaluate(
        "([c, s]) => tileclockViewer.take('tileclock/' + c + '/public', s, false)", ["c9", json.dumps(state)]
    )
    page.evaluate("tileclockViewer.draw()")
    starts = page.locator("section.board .starts")
    assert starts.inner_text().startswith("STARTS ")
    page.clock.set_fixed_time((AT_MS + 6_000) / 1000)
    page.evaluate("tileclockViewer.draw()")
    assert starts.inner_text().startswith("ROUND BEGAN ")
    page.context.close()


def test_the_page_says_when_the_round_ends_at_the_latest(browser, viewers_broker):
    """The round's latest end as the director's page says it (NASPA: both sides' time left and
    overtime cap), each board by its own Pi's clock, a stopped one counted as stopped."""
    page = open_page(browser, viewers_broker, "")

    def take(clock, state):
        page.evaluate(
            "([c, s]) => tileclockViewer.take('tileclock/' + c + '/public', s, false)", [clock, state]
        )

    hour = 3_600_000
    for clock, off in (("7", 0), ("31", 2 * hour)):  # 20:00 each and the caps: an hour from now
        for seq in (1, 2):
            take(clock, json.dumps({**json.loads(running_state(clock, seq, AT_MS - 40 + off)), "round": 4}))
    stopped = {**json.loads(running_state("12", 1, AT_MS - 40)), "round": 4, "state": "paused", "run": None}
    stopped["A"] = {**stopped["A"], "runs": False, "left_ms": 1_170_000, "shown": "19:30"}  # 30 s less
    take("12", json.dumps(stopped))
    take("3", json.dumps({**json.loads(running_state("3", 1, AT_MS - 40)), "round": 3}))  # an older round's
    page.evaluate("tileclockViewer.draw()")

    def at(ms):
        return page.evaluate(
            "ms => { const d = new Date(ms), p = n => String(n).padStart(2, '0'); return p(d.getHours()) + ':' + p(d.getMinutes()); }",
            ms,
        )

    ends = page.locator("#ends")
    assert (
        ends.inner_text()
        == f"Round 4 ends by {at(AT_MS + hour)} at the latest: Board 7, Board 12, Board 31 will be last"
    )
    # ten minutes on, the running boards' ends stand; the stopped board's moves on with the time
    page.clock.set_fixed_time((AT_MS + 600_000) / 1000)
    page.evaluate("tileclockViewer.draw()")
    assert (
        ends.inner_text()
        == f"Round 4 ends by {at(AT_MS + 600_000 + hour - 30_000)} at the latest: Board 12 will be last"
    )
    page.context.close()


def test_the_spectators_likely_end_is_the_directors_for_a_scripted_game(browser, viewers_broker, sim):
    """The likely end from the game's pace (issue 41, point 4), counted on the spectators' page from
    the clock's public state as the director's page counts it (hall/ends.py), in a scripted game
    (A 60 s a turn, B 30 s, then a stop), running and stopped, then said in the round's line. The
    director's page reads whole seconds from the panels' text, the public state the exact time
    left: they agree within two seconds."""
    from tileclock.clock.history import game_rules
    from tileclock.device.links.hall_public import PublicScene, public_text
    from tileclock.director.hall.ends import likely_end, pace

    script = "1 press B\n" + "".join(
        f"{1 + 90 * n + 60} press A\n{1 + 90 * (n + 1)} press B\n" for n in range(4)
    )
    records = sim(script + "400 press STOP\n420 until\n")
    page = open_page(browser, viewers_broker, "")
    rules, scene, checked = game_rules(records[0]), PublicScene(), []
    for i, record in enumerate(records):
        scene.take(record)
        text = public_text("c1", "7", {"round": 4}, scene, record, 0, SIM_EPOCH_NS)
        if record.get("state") not in ("running", "paused") or text is None:
            continue
        state = json.loads(text)
        for later_ms in (0, 20_000):
            now_ms = state["at_ms"] + later_ms
            board = {**{key: record[key] for key in ("state", "run", "A", "B")}, "age_ms": later_ms}
            board["pace"] = pace(records[: i + 1])
            theirs = likely_end(rules, board, now_ms)
            ours = page.evaluate(
                "([t, now]) => TileclockCount.likelyEnd(TileclockCount.parse(t), now, 0)", [text, now_ms]
            )
            assert abs(ours - theirs) <= 2_000, (record["ev"], record["seq"], later_ms, ours, theirs)
            checked.append(record["state"])
    assert {"running", "paused"} <= set(checked)
    # the round's line says it beside the latest end
    page.evaluate("t => tileclockViewer.take('tileclock/c1/public', t, false)", text)
    page.clock.set_fixed_time(state["at_ms"] / 1000)
    page.evaluate("tileclockViewer.draw()")
    assert re.fullmatch(
        r"Round 4 ends by \d\d:\d\d at the latest, likely \d\d:\d\d: Board 7 will be last",
        page.inner_text("#ends"),
    ), page.inner_text("#ends")
    page.context.close()


def test_a_school_rounds_latest_end_is_its_start_plus_the_limit(browser, viewers_broker):
    """School rule 21: no overtime cap, the round ends 50 minutes from its start at the latest;
    the public state says the limit (`limit_s`), so the spectators' page says it as the director's
    page does (it said nothing: the public state carried no round limit)."""
    page = open_page(browser, viewers_broker, "")
    state = {**json.loads(running_state("4", 1, AT_MS)), "round": 2, "cap_s": None, "limit_s": 3000}
    state["start_ms"] = AT_MS - 600_000  # the round began ten minutes ago
    page.evaluate("s => tileclockViewer.take('tileclock/4/public', s, false)", json.dumps(state))
    page.evaluate("tileclockViewer.draw()")
    latest = page.evaluate(
        "s => TileclockCount.latestEnd(TileclockCount.parse(s), Date.now(), 0)", json.dumps(state)
    )
    assert latest == AT_MS - 600_000 + 3_000_000
    assert page.inner_text("#ends").startswith("Round 2 ends by ")
    assert page.inner_text("#ends").endswith(" at the latest: Board 4 will be last")
    page.context.close()
