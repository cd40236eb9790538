"""Commands on the hall's broker are sealed (wire/seal.py): a captured command published again, a
forged one or an unsealed one is refused by the clock and recorded as refused; so is one no longer
fresh (issue 37): published more than 10 s from the clock's wall clock, or made before its game
began, and the hall's audit trail says it was not delivered. A real mosquitto; the clock in
virtual time, the director's wall clock following it as chrony keeps it (nothing sleeps)."""

import os
import secrets
import tomllib
from dataclasses import replace

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS, tap
from support.hall_helpers import hall_config, wait_for
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config import ConfigError, parse_config
from tileclock.device.config_schema import Config
from tileclock.device.links.hall_seal import CommandSeal
from tileclock.device.timesync import system_wall
from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.audit_read import outcome_of, read
from tileclock.director.hall.feed import HallFeed
from tileclock.sim.simulator import Simulator
from tileclock.wire.seal import FRESH_MS, MAX_SEALED, Sealer, SealError, judge, read_keys, seal, unseal

KEY = secrets.token_hex(32)
MADE = 1_764_000_000_000


def test_a_sealed_command_opens_once_for_its_own_clock_only():
    key = bytes.fromhex(KEY)
    line = seal(key, "c1", 7, "round over*1234abcd", MADE).encode()
    assert unseal(key, "c1", line, 6) == (7, MADE, b"round over*1234abcd")
    with pytest.raises(SealError, match="replayed"):
        unseal(key, "c1", line, 7)
    with pytest.raises(SealError, match="not this clock's key"):
        unseal(key, "c2", line, 0)  # sealed for c1
    with pytest.raises(SealError, match="not this clock's key"):
        unseal(bytes(32), "c1", line, 0)
    with pytest.raises(SealError, match="not this clock's key"):
        unseal(key, "c1", line.replace(b"sig 7 ", b"sig 8 "), 7)  # a counter raised by hand
    with pytest.raises(SealError, match="not this clock's key"):  # a captured command made fresh by hand
        unseal(key, "c1", line.replace(str(MADE).encode(), str(MADE + 32_000).encode()), 6)
    with pytest.raises(SealError, match="without this clock's seal"):
        unseal(key, "c1", b"round over*1234abcd", 0)
    # the seal before it carried its time (an older hall): refused by name, never taken untimed
    untimed = line.replace(f" {MADE} ".encode(), b" ")
    with pytest.raises(SealError, match="without the time it was made"):
        unseal(key, "c1", untimed, 0)
    # the longest command fits, sealed with the longest counter and time
    longest = seal(key, "c1", 10**20 - 1, "x" * 120, 10**15 - 1).encode()
    assert len(longest) == MAX_SEALED and unseal(key, "c1", longest, 0).line == b"x" * 120


def test_a_command_is_fresh_within_ten_seconds_of_the_clocks_wall_clock_either_way():
    assert FRESH_MS == 10_000
    assert judge(MADE, MADE + 10_000) is None and judge(MADE, MADE - 10_000) is None
    assert judge(MADE, MADE + 32_000) == "made 32.0 s before this clock's time (more than 10 s)"
    assert judge(MADE, MADE - 10_001) == "made 10.0 s after this clock's time (more than 10 s)"


def test_an_unsynchronised_clock_takes_only_what_changes_no_game():
    refusal = CommandSeal.refusal
    for name in ("round_over", "adjust", "new_game", "late", "reopen", "call", "set", "code"):
        why, detail = refusal(name, MADE, None, None)
        assert why == "unsynchronised" and "not synchronised" in detail
    for name in ("status", "resend", "ack"):  # the records still reach the hall
        assert refusal(name, MADE, None, None) is None
        assert refusal(name, MADE, MADE + 11_000, None)[0] == "stale"  # synchronised: judged
    assert refusal("round_over", MADE, MADE + 1_000, MADE + 500) == (
        "before_game",
        "made 0.5 s before this clock's game began (for a game gone by)",
    )
    assert refusal("ack", MADE, MADE + 1_000, MADE + 500) is None  # an ack names seqs, not a game
    assert refusal("round_over", MADE, MADE + 1_000, MADE) is None


def test_the_directors_counter_only_rises_even_when_its_clock_stands_still():
    sealer = Sealer({"c1": bytes.fromhex(KEY)})
    counters = [int(sealer.line("c1", "status", 1000, MADE).split()[1]) for _ in range(3)]
    assert counters == [1000, 1001, 1002]
    assert sealer.line("c1", "status", 2_000_000).split()[2] == "2000"  # made: its µs in ms
    assert sealer.line("c9", "status", 5000) == "status"  # no key for it: as it is


def test_a_key_in_the_config_must_be_hall_setups_64_hex_digits():
    text = '[clock]\nid = "c1"\n[hall]\nbroker = "127.0.0.1"\nkey = "%s"\n'
    assert parse_config(tomllib.loads(text % KEY)).hall.key == KEY
    with pytest.raises(ConfigError, match="hall.key"):
        parse_config(tomllib.loads(text % "secret"))
    with pytest.raises(ValueError, match="line 2"):
        read_keys(f"c1 {KEY}\nc2 short\n")


@pytest.fixture
def sealed_hall(broker, tmp_path):
    config = replace(Config(clock_id="c1"), hall=replace(hall_config(broker, "c1"), key=KEY))
    sim = Simulator(config, state_dir=str(tmp_path / "c1"), refresh_on_ticks=False)
    # the director's wall clock: the clock's own (SIM_EPOCH_NS on from its virtual time), as chrony
    # keeps them; a test moves both by moving the virtual time
    feed = HallFeed(
        "127.0.0.1",
        broker.port,
        BROKER_USERS["director"],
        str(tmp_path / "out"),
        keys=read_keys(f"c1 {KEY}"),
        wall=lambda: (SIM_EPOCH_NS + sim.time()) / NS_PER_S,
    ).start()
    wait_for(lambda: feed.connection.connected.is_set() and sim.uplink._connected, what="both online")
    feed.test_clock = sim
    tap(sim, "B", 1)
    tap(sim, "STOP", 5)  # a stopped clock: a director's correction applies
    yield sim, feed
    feed.close()
    sim.close()


def adjustments(sim):
    return [r for r in sim.journal.records() if r["ev"] == "adjust"]


def refusals(sim):
    return [r["detail"] for r in sim.journal.records() if r["ev"] == "error"]


def game_seq(sim):
    return sim.clock.game.seq


#: a command of the director's, how it is written for the clock `sim`, and its record when applied
CAPTURED = {
    "adjust": (lambda sim: "adjust A +60000", "adjust"),
    "speech": (lambda sim: "set speech=A", "set"),  # who hears the clock: the page's speech action
    "moved": (lambda sim: f"moved {game_seq(sim)} c2", "moved"),  # the page's move, told to the dead clock
}


@pytest.mark.parametrize(("line_of", "ev"), CAPTURED.values(), ids=CAPTURED.keys())
def test_a_captured_command_published_again_is_refused_and_recorded(sealed_hall, broker, line_of, ev):
    sim, feed = sealed_hall
    captured = []
    publish = feed.connection.client.publish
    feed.connection.client.publish = lambda name, payload, **kw: (
        captured.append(payload),
        publish(name, payload, **kw),
    )[1]
    line = line_of(sim)

    def applied():
        return [r for r in sim.journal.records() if r["ev"] == ev]

    feed.command(line, "c1")
    wait_for(lambda: (sim.daemon.pump(sim.time()), applied())[1], what="the director's command")
    # an eavesdropper with the director's login publishes the same bytes three times
    thief = thief_for(feed, broker)
    for _ in range(3):
        thief.publish("tileclock/c1/cmd", captured[0], qos=1).wait_for_publish(5)
    thief.publish("tileclock/c1/cmd", f"{line}*" + captured[0].rsplit("*", 1)[1], qos=1).wait_for_publish(5)
    wait_for(lambda: (sim.daemon.pump(sim.time()), refusals(sim))[1], what="the refusal")
    sim.daemon.pump(sim.time() + 10**9)
    assert len(applied()) == 1  # applied once, as the director sent it
    assert any("replayed command" in detail for detail in refusals(sim))
    thief.loop_stop()


def test_an_unsealed_or_forged_command_is_refused(sealed_hall):
    sim, feed = sealed_hall
    feed.sealer.keys["c1"] = bytes(32)  # the wrong key: a forger's
    feed.command("adjust A +60000", "c1")
    feed.sealer.keys.clear()  # and none: the CRC alone, as before
    feed.command("adjust B +60000", "c1")
    wait_for(lambda: (sim.daemon.pump(sim.time()), len(refusals(sim)) >= 1)[1], what="the refusals")
    sim.daemon.pump(sim.time() + 10**9)
    assert adjustments(sim) == []
    assert any("not this clock's key" in d or "without this clock's seal" in d for d in refusals(sim))


# --- issue 37: a command is good only while it is fresh (through a real mosquitto)

BY = "page-3f2a9c1b"


def trail_of(feed, tmp_path):
    """The hall's audit trail, hearing the clocks' answers as the page's does (pages/web.py)."""
    trail = AuditLog(str(tmp_path / "out"))
    feed.subscribe(lambda clock, record, _log: trail.answered(clock, record))
    sim = feed.test_clock
    wait_for(
        lambda: (sim.daemon.pump(sim.time()), feed.step(0.02), "c1" in feed.boards)[2], what="c1's board"
    )
    return trail


def act(trail, feed, action, command, lost=None):
    """`command` to c1 as the page sends it (pages/board_routes.act_as): on the trail, then sent
    with `by=` its id. `lost` (a list): the clock is away, so the broker drops it (QoS 0); what the
    director published is kept there, as an eavesdropper on the Wi-Fi captures it."""
    board = next(b for b in feed.snapshot()["boards"] if b["clock"] == "c1")
    entry = trail.record(action, BY, "10.0.0.5", command, "c1", board, {}, answered=True)
    if lost is None:
        feed.command(entry["command"], "c1")
        return entry
    publish = feed.connection.client.publish
    feed.connection.client.publish = lambda name, payload, **kw: lost.append(payload)
    try:
        feed.command(entry["command"], "c1")
    finally:
        feed.connection.client.publish = publish
    return entry


def thief_for(feed, broker):
    """An eavesdropper online with the director's login, the director stepped aside (one login is
    one session on the broker)."""
    feed.connection.client.disconnect()
    feed.connection.client.loop_stop()
    thief = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    thief.username_pw_set("director", BROKER_USERS["director"])
    thief.connect("127.0.0.1", broker.port)
    thief.loop_start()
    wait_for(thief.is_connected, what="the thief online")
    return thief


def publish_again(feed, broker, payload, times=1):
    """An eavesdropper with the director's login publishes captured bytes (the director steps
    aside meanwhile: one login is one session on the broker), then the director comes back."""
    thief = thief_for(feed, broker)
    for _ in range(times):
        thief.publish("tileclock/c1/cmd", payload, qos=1).wait_for_publish(5)
    thief.disconnect()
    thief.loop_stop()
    feed.connection.client.reconnect()
    feed.connection.client.loop_start()
    wait_for(feed.connection.connected.is_set, what="the director back")


def records(sim, ev):
    return [r for r in sim.journal.records() if r["ev"] == ev]


def answers_to(sim, entry):
    """c1's records that answer the action `entry` (its `by`)."""
    return [r for r in sim.journal.records() if r.get("by") == entry["id"]]


def action_of(trail, entry):
    """The action `entry` as the trail reads back, with its outcomes."""
    return next(e for e in read(os.path.dirname(trail.path)) if e.get("id") == entry["id"])


def answered(sim, feed, trail, entry):
    """What the trail says became of `entry` at c1, once it says anything (the clock pumped, the
    feed stepped, the outcome on the disk)."""

    def said():
        sim.daemon.pump(sim.time())
        feed.step(0.02)
        trail.flush(1)
        return outcome_of(action_of(trail, entry), "c1")

    wait_for(lambda: said()["state"] != "no answer yet", what=f"the outcome of {entry['command']}")
    return said()


def test_a_round_over_captured_and_published_32_s_later_is_refused_and_not_delivered(
    sealed_hall, broker, tmp_path
):
    sim, feed = sealed_hall
    trail = trail_of(feed, tmp_path)
    lost = []
    made_ms = (SIM_EPOCH_NS + sim.time()) // 10**6  # the director's wall clock, as chrony keeps them
    entry = act(trail, feed, "round_over", "round over", lost)  # the clock is away
    assert len(lost) == 1 and lost[0].startswith(f"sig {feed.sealer.counter} {made_ms} ")
    sim.catch_up(sim.time() + 32 * NS_PER_S)  # 32 s on, virtual time: the clock back, its game going on
    publish_again(feed, broker, lost[0])
    outcome = answered(sim, feed, trail, entry)
    assert records(sim, "end") == []  # its game goes on, untouched
    (error,) = answers_to(sim, entry)  # (the feed's own resends may be refused as stale too)
    assert error["detail"] == (
        "refused: round over: a stale command: made 32.0 s before this clock's time (more than 10 s)"
    )
    assert error["refused"] == "stale" and error["by"] == entry["id"] and error["made_ms"] == made_ms
    # the audit trail: never the director's action applied
    assert outcome["state"] == "not delivered" and outcome["reason"] == error["detail"]
    # published once more: refused again (its counter is taken now), and still changes nothing
    publish_again(feed, broker, lost[0], times=2)

    def replayed():
        return [r for r in records(sim, "error") if "replayed command" in r["detail"]]

    wait_for(lambda: (sim.daemon.pump(sim.time()), replayed())[1], what="the refusal")
    assert records(sim, "end") == [] and outcome_of(action_of(trail, entry), "c1") == outcome


def test_a_command_made_before_the_clocks_game_began_is_refused(sealed_hall, broker, tmp_path):
    sim, feed = sealed_hall
    trail = trail_of(feed, tmp_path)
    first = act(trail, feed, "round_over", "round over")  # at 5 s: the round ends, game 1 with it
    assert answered(sim, feed, trail, first)["state"] == "applied"
    sim.catch_up(6 * NS_PER_S)
    lost = []
    again = act(trail, feed, "round_over", "round over", lost)  # at 6 s, sent again: this clock away
    tap(sim, "STOP", 7, hold_s=2.5)  # the players open their next game at the board
    (opened,) = [r for r in records(sim, "new_game") if r["seq"] > records(sim, "end")[0]["seq"]]
    tap(sim, "B", 10)  # and play it: A's clock runs
    sim.catch_up(12 * NS_PER_S)  # 6 s after the command was made: fresh, but for the game gone by
    publish_again(feed, broker, lost[0])
    outcome = answered(sim, feed, trail, again)
    assert len(records(sim, "end")) == 1 and sim.view().run == "A"  # the new game plays on
    (error,) = answers_to(sim, again)
    assert error["refused"] == "before_game" and error["seq"] > opened["seq"]
    assert "before this clock's game began" in error["detail"]
    assert outcome["state"] == "not delivered"


def test_a_fresh_command_is_applied(sealed_hall, tmp_path):
    sim, feed = sealed_hall
    trail = trail_of(feed, tmp_path)
    sim.catch_up(9 * NS_PER_S)
    entry = act(trail, feed, "round_over", "round over")
    outcome = answered(sim, feed, trail, entry)
    (end,) = records(sim, "end")
    assert end["reason"] == "round_over" and end["by"] == entry["id"]
    assert outcome["state"] == "applied" and outcome["seq"] == end["seq"]
    # a new game the director opens takes the director's next command, however soon
    opened = act(trail, feed, "new_game", "new game")
    fix = act(trail, feed, "adjust", "adjust A +60000")
    assert answered(sim, feed, trail, opened)["state"] == "applied"
    assert answered(sim, feed, trail, fix)["state"] in ("applied", "refused")
    assert "before this clock's game began" not in str(answered(sim, feed, trail, fix).get("reason"))


def test_a_clock_not_synchronised_refuses_what_changes_a_game_and_still_answers(
    sealed_hall, broker, tmp_path
):
    sim, feed = sealed_hall
    trail = trail_of(feed, tmp_path)
    # the kernel says: not synchronised (adjtimex, as chrony leaves it until it reaches the laptop)
    sim.daemon.commands.wall = system_wall(sim.time, sim.parts.wall, synced=lambda: False)
    entry = act(trail, feed, "round_over", "round over")
    outcome = answered(sim, feed, trail, entry)
    assert records(sim, "end") == []
    (error,) = answers_to(sim, entry)
    assert error["refused"] == "unsynchronised" and "not synchronised (chrony)" in error["detail"]
    assert outcome["state"] == "refused"  # it got it and said why: the director acts at the board
    # a status is still answered, and a resend served: they change no game, and the records must
    # still reach the hall while chrony catches up
    answers = []
    sim.uplink.answer = answers.append
    feed.command("status", "c1", crc=False)
    wait_for(lambda: (sim.daemon.pump(sim.time()), answers)[1], what="the status answer")
    assert b'"ev":"status"' in answers[0].encode() and records(sim, "end") == []
