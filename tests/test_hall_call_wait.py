"""How long a call has waited, as the hall shows it (director/hall/board.py): by the clock's
time of day of the raise when its wall clock agrees with this laptop's, else by the clock's own count
of its game time; and a forged time of day, refused by the hall as a clock publishes it. The call
end to end: tests/test_hall_calls.py, test_hall_page_calls.py."""

import json
from types import SimpleNamespace

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS
from support.call_hall import call_from, hall  # noqa: F401  (the fixture: two clocks, the feed and the page)
from support.hall_helpers import wait_for
from tileclock.director.hall.board import Board
from tileclock.wire.protocol import frame

#: the laptop's time of day as the players called
CALLED_MS = 1_764_079_200_000


def test_a_calls_time_of_day_counts_only_if_the_clocks_wall_clock_agrees_with_the_laptops():
    raised = 1_764_079_200_000
    records = [
        {"seq": 5, "ev": "new_game", "t_ms": 0},
        {"seq": 9, "ev": "call", "t_ms": 60_000, "wall_ms": raised},
        {"seq": 10, "ev": "status", "t_ms": 90_000},  # the clock counted 30 s since the call
    ]
    log = SimpleNamespace(game=SimpleNamespace(seq=5, records=records))

    def waited(now_ms):
        return Board("c1").open_call(log, None, now_ms / 1000)["waited_ms"]

    assert (
        waited(raised + 95_000) == 95_000
    )  # from the raise: the hall, just restarted, has heard nothing since
    assert waited(raised + 29_000) == 29_000  # within the slack of its count
    assert waited(raised + 10_000) == 30_000  # less than the clock's own count: its wall clock is off
    assert waited(raised - 3_600_000) == 30_000  # raised "in an hour": the clock is ahead
    assert waited(raised + 330 * 86_400_000) == 30_000  # a wall clock most of a year behind (a simulation's)


@pytest.mark.parametrize(
    "case, wall_ms, now_ms, waited_ms",
    [
        ("wall clock right", CALLED_MS, CALLED_MS + 31_000, 31_000),
        ("right, its last record 20 s late", CALLED_MS, CALLED_MS + 51_000, 51_000),
        ("wall clock 2 h slow", CALLED_MS - 7_200_000, CALLED_MS + 31_000, 31_000),  # a `set wall=` typo
        ("wall clock 2 h fast", CALLED_MS + 7_200_000, CALLED_MS + 31_000, 31_000),
        # hall-demo --speed 10: the simulated wall clock runs with the game, 10 times the laptop's
        # (started 6 s before the call, at game time 60 s): the wait is the game's count
        ("hall-demo --speed 10", CALLED_MS - 6_000 + 60_000, CALLED_MS + 4_000, 31_000),
        ("forged 0", 0, CALLED_MS + 31_000, 31_000),
        ("forged 2^63-1", 2**63 - 1, CALLED_MS + 31_000, 31_000),
    ],
)
def test_a_calls_wait_in_the_game_the_hall_hears_is_the_clocks_count_unless_its_wall_clock_agrees(
    case, wall_ms, now_ms, waited_ms
):
    # the call 60 s into the game, and a record 30 s later that the hall heard 1 s ago
    records = [
        {"seq": 5, "ev": "new_game", "t_ms": 0},
        {"seq": 9, "ev": "call", "t_ms": 60_000, "wall_ms": wall_ms},
        {"seq": 10, "ev": "status", "t_ms": 90_000},
    ]
    log = SimpleNamespace(game=SimpleNamespace(seq=5, records=records))
    call = Board("c1").open_call(log, 1_000, now_ms / 1000)
    assert call["waited_ms"] == waited_ms, case  # never 2:00:31, 0:00, or decades
    assert call["raised_ms"] == (None if case.startswith("forged") else wall_ms)  # never shown


@pytest.mark.parametrize("forged_ms", [0, 2**63 - 1])
def test_a_forged_time_of_day_is_refused_and_the_clock_still_followed(hall, forged_ms):  # noqa: F811  (the fixture)
    (last,) = hall.clock_records("c1")[-1:]
    forged = {**last, "seq": last["seq"] + 1, "ev": "call", "button": "STOP", "wall_ms": forged_ms}
    line = frame(json.dumps(forged, separators=(",", ":")))
    # signed in as c1 (the broker takes the user name as the client id), the forger puts the clock
    # off the broker, and the clock's reconnection (1 to 4 s on) puts the forger off in turn: on a
    # loaded machine that can come before the forgery is acknowledged, so it is sent until it is
    for _ in range(5):
        forger = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger")
        forger.username_pw_set("c1", BROKER_USERS["c1"])  # the clock's own credentials, on its own topic
        forger.connect("127.0.0.1", hall.broker.port)
        forger.loop_start()
        sent = forger.publish("tileclock/c1/records", line, qos=1)
        try:
            sent.wait_for_publish(5)
        except (RuntimeError, ValueError):
            pass  # put off the broker before it went out
        forger.loop_stop()
        forger.disconnect()
        if sent.is_published():
            break
    assert sent.is_published(), "the broker never took the forgery"
    wait_for(lambda: hall.board("c1")["refused"] == 1, what="the forged call refused")
    assert hall.board("c1")["call"] is None  # no banner counting from 1970, or from 292 million years on
    (kept,) = [json.loads(line) for line in (hall.folder / "rejects.log").read_text().splitlines()]
    assert (kept["reason"], kept["field"]) == ("wrong_kind", "call.wall_ms")
    assert "is not a time of day 2020 to 2100" in kept["detail"]
    # the clock's own next records (its seq taken by the forgery) still come: a real call shows
    call_from(hall, "c1")
    # the forger signed in as c1 and put the clock off the broker: the clock's loop sends its call
    # once it is back (its reconnect back-off is drawn, 1 to 4 s), as a running clock's loop would
    wait_for(lambda: (hall.clocks.pump(), hall.board("c1")["call"])[1], what="the real call")
    assert (
        hall.board("c1")["call"]["raised_ms"]
        == [r for r in hall.clock_records("c1") if r["ev"] == "call"][-1]["wall_ms"]
    )
