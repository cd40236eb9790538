"""The hall's uplink cannot flood the clock either (docs/reliability.md, the flood row).

A `resend 0` over the broker (a fresh `tileclock hall` asks exactly that) is streamed from the
journal a budget a wake, overlapping requests merge, live records go first; a `status` is answered
on the clock's `answer` topic and never journaled. All through a real mosquitto.
"""

from collections import Counter
from dataclasses import replace

import pytest

from conftest import tap
from support.hall_helpers import Listener, hall_config, wait_for
from tileclock.bench.history import make_history, sample_game
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.links.resends import STREAM_NS, Resends
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe, unframe_any


@pytest.fixture(
    params=[pytest.param(12, id="1100-records"), pytest.param(40, id="3700-records", marks=pytest.mark.slow)]
)
def history(request, tmp_path):
    """A state directory whose journal holds the records of earlier games (12 games, some 1,100
    records, in `make test`; 40, some 3,700, in `make test-slow`), all of them acknowledged by the
    broker long ago: only a resend sends them again."""
    state = tmp_path / "c1"
    made = make_history(str(state), request.param, sample_game(minutes=10))
    (state / "hall.acked").write_text(f"{made - 1}\n")
    return state, made


def clock_on(broker, state):
    return Simulator(replace(Config(clock_id="c1"), hall=hall_config(broker)), state_dir=str(state))


def wake(sim):
    """One wake of the loop, as soon as it would wake while a resend streams."""
    sim.time.set(sim.time() + STREAM_NS)
    sim.daemon.pump(sim.time())


def command(sim, director, *lines):
    """The director sends `lines` on the clock's command topic; they wait for the loop's next wake."""
    for line in lines:
        director.publish("tileclock/c1/cmd", line, qos=0).wait_for_publish(5)
    wait_for(lambda: len(sim.uplink._commands) == len(lines), what="the commands")


def test_a_resend_of_the_whole_journal_streams_a_budget_a_wake_merged_and_after_the_presses(broker, history):
    state, made = history
    listener = Listener(broker)
    sim = clock_on(broker, state)
    wait_for(lambda: sim.uplink._connected, what="the clock online")
    sim.uplink.pump()
    wait_for(lambda: listener.seqs() == set(range(made, sim.journal.next_seq)), what="the new game's records")
    asked_last = sim.journal.next_seq - 1
    handed = []  # (wake, seq) of every record handed to paho, in order
    publish = sim.uplink.client.publish

    def noted(name, payload=None, *args, **kwargs):
        if name.endswith("/records"):
            handed.append((sim.daemon.wakeups, unframe(payload)["seq"]))
        return publish(name, payload, *args, **kwargs)

    sim.uplink.client.publish = noted
    command(sim, listener.client, "resend 0")
    for _ in range(6):
        wake(sim)
    command(sim, listener.client, "resend 0", "resend 100 900", "resend 0")  # overlapping: merged
    wake(sim)
    switch = sim.journal.next_seq  # the first record the press makes
    tap(sim, "B", sim.time() / NS_PER_S + 0.01)  # a press while the resend streams; the loop's own wakes
    assert sim.journal.next_seq > switch

    def owed(seq):  # every record once; a new one sent live, and once more if it was asked for
        return 1 + (made <= seq <= asked_last)

    def finished():
        wake(sim)  # with the window full, paho's acknowledgements free it in the meantime
        counts = Counter(record["seq"] for record in listener.records())
        return all(counts[seq] >= owed(seq) for seq in range(sim.journal.next_seq))

    wait_for(finished, 60, "the resend to finish")
    for _ in range(3):
        wake(sim)  # nothing more is owed
    wait_for(lambda: not sim.uplink._seq_of, what="nothing left in flight")
    per_wake = Counter(wake_no for wake_no, seq in handed if seq < made)
    assert max(per_wake.values()) <= Resends.PER_WAKE  # no wake held the loop for more than its budget
    assert len(per_wake) >= made // Resends.PER_WAKE  # the journal went out over many wakes
    # the press's record went out first in its wake, before any resent line
    press_wake = next(wake_no for wake_no, seq in handed if seq == switch)
    assert [seq for wake_no, seq in handed if wake_no == press_wake][0] == switch
    arrived = [record["seq"] for record in listener.records()]
    old = [i for i, seq in enumerate(arrived) if seq < made]
    assert arrived.index(switch) < old[-1]  # it reached the broker while the resend went on
    counts = Counter(arrived)
    assert all(counts[seq] == 1 for seq in range(made))  # the requests merged: each record once
    assert all(counts[seq] == owed(seq) for seq in range(made, sim.journal.next_seq))
    sim.close()
    listener.close()


def test_status_over_the_hall_is_answered_on_the_clocks_topic_and_never_journaled(broker, tmp_path):
    listener = Listener(broker)
    sim = clock_on(broker, tmp_path / "c1")
    wait_for(lambda: sim.uplink._connected, what="the clock online")
    tap(sim, "B", 1)
    sim.uplink.pump()
    wait_for(lambda: listener.seqs() == set(range(sim.journal.next_seq)), what="the records")
    before = sim.journal.next_seq
    command(sim, listener.client, *["status"] * 20)
    wake(sim)
    wait_for(lambda: listener.payloads("tileclock/c1/answer"), what="the answer")
    assert sim.journal.next_seq == before  # nothing written for twenty of them
    answers = [unframe_any(payload.decode("ascii")) for payload in listener.payloads("tileclock/c1/answer")]
    assert len(answers) == 1  # only the newest waits: one answer a wake
    assert answers[0]["ev"] == "status" and "seq" not in answers[0]
    assert answers[0]["clock"] == "c1" and answers[0]["last_seq"] == before - 1
    assert answers[0]["run"] == "A"  # as of the asking: B was pressed, A runs
    sim.close()
    listener.close()
