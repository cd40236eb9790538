"""Hostile input on the fields and messages added with the hall's TLS, its fresh seals, a token a
side and the audit trail's new lines: the retained state's `tls: false`, the `error` record's
`refused`, `made_ms` and `by`, the sealed command `sig COUNTER MADE MAC COMMAND`, `code GAME BASE
TOKEN_A TOKEN_B`, and audit.log's `unlock`, `tsh_queue` and `not_delivered`. Each with a wrong type,
a huge value and deep nesting, and each from another clock's credentials (a real mosquitto): a
typed WireError with its reason, or the broker's ACL dropping it, and no game changed."""

import json

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS
from support.hall_helpers import Listener, wait_for
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.director.hall.audit import AuditLog, read
from tileclock.sim.simulator import Simulator
from tileclock.wire.decoder import Reason, WireError
from tileclock.wire.director_files import decode_audit_line
from tileclock.wire.protocol import CommandError, frame, parse_command, with_crc
from tileclock.wire.records import RecordError, decode
from tileclock.wire.seal import MAX_SEALED, SealError, seal, unseal
from tileclock.wire.state import StateError, decode_state

S = NS_PER_S
DEEP = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}}

STATE = {"clock": "t01", "board": "7", "seq": 12, "state": "running", "run": "A"}


def test_a_clock_without_tls_says_so_and_is_taken():
    assert decode_state(json.dumps({**STATE, "tls": False}).encode(), "t01")["tls"] is False


@pytest.mark.parametrize(
    ("tls", "reason"),
    [
        ("false", Reason.WRONG_KIND),  # a wrong type: only `false` is ever said
        (0, Reason.WRONG_KIND),
        (True, Reason.WRONG_KIND),  # a clock on TLS says nothing
        (None, Reason.WRONG_KIND),
        ("x" * 5000, Reason.TOO_LARGE),  # huge
        ([[[[[[False]]]]]], Reason.TOO_DEEP),  # nested
        (DEEP, Reason.TOO_DEEP),
    ],
)
def test_a_hostile_tls_in_the_state_refuses_the_state_whole(tls, reason):
    with pytest.raises(StateError) as caught:
        decode_state(json.dumps({**STATE, "tls": tls}).encode(), "t01")
    assert isinstance(caught.value, WireError) and caught.value.reason == reason


SIDE = {"used_ms": 1000, "shown": "24:59", "pen": 0}
ERROR = {
    "seq": 9,
    "ev": "error",
    "t_ms": 1000,
    "state": "running",
    "run": "A",
    "A": SIDE,
    "B": SIDE,
    "detail": "refused: round over: a stale command",
    "refused": "stale",
    "made_ms": 1_764_000_000_000,
    "by": "page-1a_t6as9s_1",
}


def test_an_honest_refusal_record_is_taken():
    assert decode(json.dumps(ERROR))["refused"] == "stale"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("refused", 1, Reason.WRONG_KIND),  # wrong types
        ("refused", ["stale"], Reason.WRONG_KIND),
        ("refused", "stale; rm -rf", Reason.WRONG_KIND),  # a reason is a word, never a sentence
        ("made_ms", "1764000000000", Reason.WRONG_KIND),
        ("made_ms", -1, Reason.WRONG_KIND),
        ("made_ms", 1.5, Reason.WRONG_KIND),
        ("made_ms", True, Reason.WRONG_KIND),
        ("by", 7, Reason.WRONG_KIND),
        ("by", "page 1", Reason.WRONG_KIND),
        ("refused", "s" * 2000, Reason.WRONG_KIND),  # huge
        ("made_ms", 2**63, Reason.BAD_NUMBER),
        ("made_ms", 10**40, Reason.BAD_NUMBER),
        ("by", "p" * 2000, Reason.WRONG_KIND),
        ("refused", "x" * 70_000, Reason.TOO_LARGE),
        ("refused", DEEP, Reason.TOO_DEEP),  # nested
        ("made_ms", [[[[[[[[[1]]]]]]]]], Reason.TOO_DEEP),
        ("by", DEEP, Reason.TOO_DEEP),
    ],
)
def test_a_hostile_refusal_record_is_refused_with_its_reason(field, value, reason):
    with pytest.raises(RecordError) as caught:
        decode(json.dumps({**ERROR, field: value}))
    assert caught.value.reason == reason
    assert len(str(caught.value)) < 300  # the message quotes none of a huge value


def test_a_refusal_from_another_clock_never_makes_an_action_not_delivered(tmp_path):
    trail = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)
    board = {"board": "7", "online": True}
    sent = trail.record("round_over", "page-1a", None, "round over", "c1", board, {}, answered=True)
    stale = {**ERROR, "by": sent["id"]}
    assert trail.answered("c2", stale) is None  # c2's credentials, answering c1's action
    assert (
        trail.answered("c1", {**stale, "refused": ["stale"]})["outcome"] == "refused"
    )  # undecoded: no crash
    assert trail.flush(5)
    (action,) = [entry for entry in read(str(tmp_path)) if entry["action"] == "round_over"]
    assert set(action["outcomes"]) == {"c1"} and action["outcomes"]["c1"]["outcome"] == "refused"


KEY = bytes.fromhex("11" * 32)
MADE = 1_764_000_000_000
LINE = with_crc("round over")


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        # wrong types: a counter, a time or a MAC that is no number (or no hex) of the seal's
        (f"sig seven {MADE} {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 soon {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 -{MADE} {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 {MADE}.5 {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 {MADE} {'A' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 {MADE} {'0' * 31} {LINE}", "without this clock's seal"),
        # huge: a counter, a time or a line longer than a seal holds
        (f"sig {'9' * 21} {MADE} {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 {'9' * 16} {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig 7 {MADE} {'0' * 32} {'x' * MAX_SEALED}", "longer than"),
        # nested: a seal inside a seal's MAC field, or spaces where its fields are
        (f"sig 7 {MADE} sig 7 {MADE} {'0' * 32} {LINE}", "without this clock's seal"),
        (f"sig  7  {MADE}  {'0' * 32}  {LINE}", "without this clock's seal"),
    ],
)
def test_a_hostile_seal_is_refused_as_a_bad_command(raw, says):
    with pytest.raises(SealError, match=says) as caught:
        unseal(KEY, "c1", raw.encode(), 0)
    assert isinstance(caught.value, WireError) and caught.value.reason == Reason.BAD_COMMAND


def test_a_sealed_seal_opens_to_a_line_no_clock_takes():
    # a command sealed twice (the director's own key, so its MAC is right): the inside is no command
    inner = seal(KEY, "c1", 7, LINE, MADE)
    opened = unseal(KEY, "c1", seal(KEY, "c1", 8, inner, MADE).encode(), 0)
    assert opened.line == inner.encode()
    with pytest.raises(CommandError):
        parse_command(opened.line)


BASE = "HTTP://10.0.0.1:8080/S/12"
TOKEN_A, TOKEN_B = "ABCD2345", "WXYZ6789"


def test_two_tokens_are_one_a_side():
    command = parse_command(with_crc(f"code 12 {BASE} {TOKEN_A} {TOKEN_B}").encode())
    assert command.args == (12, BASE, (TOKEN_A, TOKEN_B))


@pytest.mark.parametrize(
    "line",
    [
        f"code 12 {BASE} {TOKEN_A} {TOKEN_B.lower()}",  # a wrong type: B's token not QR alphanumeric
        f"code 12 {BASE} {TOKEN_A} 12.5",
        f"code 12 {BASE} {TOKEN_A} {TOKEN_B}%",
        f"code 12 {BASE} {TOKEN_A} {'B' * 60}",  # huge: B's link longer than its panel's code holds
        f"code 12 {BASE} {TOKEN_A} {TOKEN_B * 40}",
        f"code 12 {BASE} {TOKEN_A} {TOKEN_B}({TOKEN_A}({TOKEN_B}))",  # nested
        f"code 12 {BASE} {TOKEN_A} {BASE}/B/{TOKEN_B}",
        f"code 12 {BASE} {TOKEN_A} {TOKEN_B} {TOKEN_A}",  # a third side
    ],
)
def test_a_hostile_second_token_is_refused_and_neither_panel_shows_a_code(line):
    with pytest.raises(CommandError):
        parse_command(with_crc(line).encode())
    sim = Simulator(Config())
    try:
        sim.send(with_crc(line), 1 * S)
        assert sim.daemon.commands.score_code.link is None
        assert [r for r in sim.journal.records() if r["ev"] == "error"]
    finally:
        sim.close()


def test_two_tokens_sealed_with_another_clock_s_key_open_on_neither_clock():
    line = with_crc(f"code 12 {BASE} {TOKEN_A} {TOKEN_B}")
    for forged in (
        seal(bytes.fromhex("22" * 32), "c2", 5, line, MADE),
        seal(bytes.fromhex("22" * 32), "c1", 5, line, MADE),
    ):
        with pytest.raises(SealError, match="not this clock's key"):
            unseal(KEY, "c1", forged.encode(), 0)


AUDIT = {"at": "2026-12-01T20:00:00.000+00:00", "wall_ms": 1_764_619_200_000, "by": "page-1a", "changed": {}}
HONEST_LINES = [
    {**AUDIT, "action": "unlock", "table": 7, "round": 3},
    {**AUDIT, "action": "tsh_queue", "table": 7, "round": 3, "reason": "queued"},
    {**AUDIT, "action": "outcome", "of": "page-1a_t6as9s_1", "clock": "c1", "outcome": "not_delivered"},
]


@pytest.mark.parametrize("line", HONEST_LINES)
def test_the_new_audit_lines_are_read_back(line):
    assert decode_audit_line(json.dumps(line)) == line


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ({**HONEST_LINES[0], "action": ["unlock"]}, Reason.WRONG_KIND),  # wrong types
        ({**HONEST_LINES[0], "action": "UNLOCK"}, Reason.WRONG_KIND),
        ({**HONEST_LINES[1], "action": 1}, Reason.WRONG_KIND),
        ({**HONEST_LINES[2], "outcome": "not delivered"}, Reason.WRONG_KIND),
        ({**HONEST_LINES[2], "outcome": False}, Reason.WRONG_KIND),
        ({**HONEST_LINES[0], "action": "unlock" * 2000}, Reason.TOO_LARGE),  # huge
        ({**HONEST_LINES[1], "reason": "r" * 301}, Reason.WRONG_KIND),
        ({**HONEST_LINES[2], "outcome": "not_delivered" + "_" * 400}, Reason.WRONG_KIND),
        ({**HONEST_LINES[1], "wall_ms": 10**40}, Reason.BAD_NUMBER),
        ({**HONEST_LINES[0], "changed": DEEP}, Reason.TOO_DEEP),  # nested
        ({**HONEST_LINES[1], "action": {"tsh_queue": {"a": {"b": {"c": 1}}}}}, Reason.TOO_DEEP),
        ({**HONEST_LINES[2], "outcome": [[[[["not_delivered"]]]]]}, Reason.TOO_DEEP),
    ],
)
def test_a_hostile_new_audit_line_is_refused_and_read_skips_it(line, reason, tmp_path):
    with pytest.raises(WireError) as caught:
        decode_audit_line(json.dumps(line))
    assert caught.value.reason == reason
    (tmp_path / "audit.log").write_text("".join(json.dumps(each) + "\n" for each in (line, *HONEST_LINES)))
    refused = []
    assert [entry["action"] for entry in read(str(tmp_path), refused)] == ["unlock", "tsh_queue"]
    assert [number for number, _ in refused] == [1]


def test_another_clock_s_credentials_carry_none_of_the_new_fields_onto_c1_s_topics(broker):
    """c2's own credentials publishing c1's `tls: false` state, a refusal naming c1's action and a
    sealed two-token `code` for c1: the ACL drops each (c2 writes only under tileclock/c2/), so
    neither the director nor c1 ever reads them; the director's own command after them arrives."""
    director = Listener(broker, client_id="watcher")
    clock = Listener(broker, user="c1", client_id="c1", subscribe="tileclock/c1/cmd")
    thief = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="c2")
    thief.username_pw_set("c2", BROKER_USERS["c2"])
    thief.connect("127.0.0.1", broker.port)
    thief.loop_start()
    wait_for(thief.is_connected, what="c2 to connect")
    code = seal(KEY, "c1", 5, with_crc(f"code 12 {BASE} {TOKEN_A} {TOKEN_B}"), MADE)
    forged = {
        "tileclock/c1/state": json.dumps({**STATE, "clock": "c1", "tls": False}),
        "tileclock/c1/records": frame(json.dumps({**ERROR, "clock": "c1"}, separators=(",", ":"))),
        "tileclock/c1/cmd": code,
    }
    for topic, payload in forged.items():
        thief.publish(topic, payload, qos=1, retain=topic.endswith("state")).wait_for_publish(5)
    # the director's own command after them (one director client: mosquitto names each by its user)
    director.client.publish("tileclock/c1/cmd", "status", qos=1).wait_for_publish(5)
    wait_for(lambda: clock.payloads("tileclock/c1/cmd") == [b"status"], what="the director's own command")
    wait_for(lambda: director.payloads("tileclock/c1/cmd") == [b"status"], what="the command seen")
    for topic in ("tileclock/c1/state", "tileclock/c1/records"):
        assert director.payloads(topic) == []
    thief.disconnect()
    thief.loop_stop()
    director.close()
    clock.close()
