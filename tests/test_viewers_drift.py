"""The spectators' count against the clock over a 25-minute game in virtual time, in Debian's
chromium with the pages' own count.js, each state arriving as late as the real brokers deliver
(docs/hall.md, "The spectators' drift")."""

import bisect
import json
import random
import time

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS
from support.hall_helpers import Spectator, wait_for
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config_schema import Config
from tileclock.device.links.hall_public import PublicScene, public_text
from tileclock.device.links.hall_state import RetainedState
from tileclock.director.pages.spectators import PAGES
from tileclock.sim.simulator import Simulator

#: where a sample is taken: every this many ms of the game, and just after each state is made
EVERY_MS = 250
#: the browser's clock this far ahead of the clocks' in the second run (a phone set by hand)
SKEWED_MS = 3_000


def delivery_ms(broker, viewers_broker, count=200):
    """How long a public state takes from a clock's publish to a spectator, through the hall's broker,
    the bridge and the spectators' broker (ms, one a state)."""
    got = {}

    class Timing(Spectator):
        def _on_message(self, client, userdata, message):
            super()._on_message(client, userdata, message)
            if message.topic == "tileclock/c1/public":
                got.setdefault(json.loads(message.payload)["n"], time.monotonic())

    spectator = Timing(viewers_broker, "timing")
    wait_for(lambda: spectator.bridged()[-1:] == [b"1"], what="the bridge")
    clock = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="c1")
    clock.username_pw_set("c1", BROKER_USERS["c1"])
    clock.connect("127.0.0.1", broker.port)
    clock.loop_start()
    sent = {}
    for n in range(count):
        sent[n] = time.monotonic()
        clock.publish("tileclock/c1/public", json.dumps({"n": n}), qos=1)
        time.sleep(0.005)
    wait_for(lambda: len(got) == count, what="every timing state")
    clock.loop_stop()
    spectator.close()
    return [(got[n] - sent[n]) * 1000 for n in range(count)]


def play(seed=30):
    """A 25-minute game (each side's 25:00, A into overtime) in virtual time: returns the public
    states with the virtual ns each was published at, and the clock's own truth at sample instants."""
    sim = Simulator(Config(clock_id="c1", board="12"), refresh_on_ticks=False)
    states = []
    public = RetainedState(
        sim.journal,
        "c1",
        "12",
        lambda name, text, retain: states.append((sim.time(), text)) if name.endswith("/public") else None,
        now_ns=sim.time,
        wall_ns=lambda: SIM_EPOCH_NS + sim.time(),
    )
    truth = []  # (virtual ns, {side: (exact left ms, shown)})

    def step(t_ns):
        sim.catch_up(t_ns)
        public.take_up()
        public.publish()

    def sample(t_ns):
        step(t_ns)
        sides = {}
        view = sim.view()
        for side in "AB":
            left = (
                sim.clock.game.allowance_ns[side] // NS_PER_S * 1000
                - sim.clock.used_ns(side, t_ns) / NS_PER_MS
            )
            sides[side] = (left, getattr(view, side).shown)
        truth.append((t_ns, sides))

    rnd = random.Random(seed)
    presses, t = [(0, "B")], 0
    side = "A"
    while t < 3100 * NS_PER_S:  # both sides' 25 minutes, A's turns a little longer: A ends in overtime
        t += int(rnd.uniform(5, 70 if side == "A" else 55) * NS_PER_S)
        if rnd.random() < 0.08:  # a challenge: stopped, then restarted by the side that was to move
            presses.append((t, "STOP"))
            t += int(rnd.uniform(5, 40) * NS_PER_S)
            presses.append((t, "B" if side == "A" else "A"))
            continue
        presses.append((t, side))
        side = "B" if side == "A" else "A"
    end = t + 5 * NS_PER_S
    instants = sorted({*range(0, end, EVERY_MS * NS_PER_MS)})
    timeline = sorted([(t, 1, b) for t, b in presses] + [(t, 0, None) for t in instants])
    for t_ns, kind, button in timeline:
        if kind:
            sim.set_button(button, True, t_ns)
            step(t_ns)
            # just after the press: where a state still on its way shows most
            for after_ms in (1, 6, 20, 60):
                sample(t_ns + after_ms * NS_PER_MS)
            sim.set_button(button, False, t_ns + 100 * NS_PER_MS)
            step(t_ns + 100 * NS_PER_MS)
        elif not truth or t_ns > truth[-1][0]:
            sample(t_ns)
    sim.close()
    return states, sorted(truth, key=lambda item: item[0])


VIEWER = """({states, arrivals, samples, skewMs}) => {
  const C = TileclockCount, skew = new C.Skew(), out = [];
  let i = -1, lastSeq = -1;
  for (const now of samples) {
    const browserNow = now + skewMs;
    while (i + 1 < states.length && arrivals[i + 1] <= now) {
      i += 1;
      const state = C.parse(states[i]);
      if (state === null) throw new Error("a state the page refuses: " + states[i]);
      if (state.seq > lastSeq) skew.sample(state, arrivals[i] + skewMs);
      lastSeq = state.seq;
    }
    if (i < 0) { out.push(null); continue; }  // nothing received yet
    const state = C.parse(states[i]);
    out.push(["A", "B"].map((side) => [C.leftAt(state, side, browserNow, skew.value()),
                                       C.shown(state, side, browserNow, skew.value())]));
  }
  return out;
}"""


def drift(page, states, truth, delays, skew_ms):
    texts = [text for _, text in states]
    arrivals = [
        (SIM_EPOCH_NS + t_ns) / NS_PER_MS + delays[n % len(delays)] for n, (t_ns, _) in enumerate(states)
    ]
    samples = [(SIM_EPOCH_NS + t_ns) / NS_PER_MS for t_ns, _ in truth]
    seen = page.evaluate(
        VIEWER, {"states": texts, "arrivals": arrivals, "samples": samples, "skewMs": skew_ms}
    )
    made = [(SIM_EPOCH_NS + t_ns) / NS_PER_MS for t_ns, _ in states]
    between, in_flight, wrong = 0.0, 0.0, 0
    for now, (_, sides), counted in zip(samples, truth, seen, strict=True):
        if counted is None:
            continue
        newest = bisect.bisect_right(made, now) - 1  # the newest state made by then: arrived yet?
        on_its_way = newest >= 0 and arrivals[newest] > now
        for (left, shown), (viewer_left, viewer_shown) in zip(sides.values(), counted, strict=True):
            if on_its_way:
                in_flight = max(in_flight, abs(viewer_left - left))
            else:
                between = max(between, abs(viewer_left - left))
            wrong += viewer_shown != shown
    return between, in_flight, wrong


# a measurement (real delivery through both brokers, printed as figures), 11 s: `make test-slow`;
# the pages' counting between states and going stale stay in `make test` (test_viewers_pages.py)
@pytest.mark.slow
def test_the_count_stays_within_the_delivery_of_the_clock(browser, broker, viewers_broker):
    delays = delivery_ms(broker, viewers_broker)
    states, truth = play()
    assert len(states) > 80 and truth[-1][0] > 50 * 60 * NS_PER_S
    page = browser.new_page()
    page.add_script_tag(path=str(PAGES / "count.js"))
    synced = drift(page, states, truth, delays, 0)
    skewed = drift(page, states, truth, delays, SKEWED_MS)
    page.close()
    delays.sort()
    print(
        f"\ndelivery through both brokers: median {delays[len(delays) // 2]:.1f} ms, "
        f"p99 {delays[int(len(delays) * 0.99)]:.1f} ms, max {delays[-1]:.1f} ms; {len(states)} states, "
        f"{len(truth)} samples over {truth[-1][0] / NS_PER_S / 60:.1f} min; the count's largest drift "
        f"from the clock: {synced[0]:.2f} ms between states, {synced[1]:.1f} ms while a state was on its "
        f"way ({synced[2]} displays differing); with the browser's clock {SKEWED_MS} ms off: "
        f"{skewed[0]:.2f} ms and {skewed[1]:.1f} ms ({skewed[2]} differing)"
    )
    assert synced[0] <= 2  # the stamp's and the time left's whole ms
    # A browser whose clock is off counts from its estimate of the offset (the least delay of the
    # last 8 states), and while a state is on its way the page shows the one before: both ride on
    # real delivery (and a state is made a few ms after its record), so they are held to what the
    # page promises, a tenth of a second, not to this run's delivery (20.8 ms in flight was seen
    # with a delivery max of 18.7 ms).
    assert skewed[0] <= 100
    assert max(synced[1], skewed[1]) <= 100


def test_a_late_start_under_school_rules_counts_no_side_down(browser, sim):
    # the panels show 25:00 / 25:00 a minute after a school late start: absence runs no clock
    records = sim("1 send late both\n61 until\n", "--rules", "school")
    scene = PublicScene()
    for record in records:
        scene.take(record)
        if record["ev"] == "late_start":
            text = public_text("c1", "12", {}, scene, record, 0, SIM_EPOCH_NS)
            break
    page = browser.new_page()
    page.add_script_tag(path=str(PAGES / "count.js"))
    at = json.loads(text)["at_ms"] + 61_000
    shown = page.evaluate(
        "([text, at]) => ['A', 'B'].map((side) => TileclockCount.shown(TileclockCount.parse(text), side, at, 0))",
        [text, at],
    )
    page.close()
    assert shown == ["25:00", "25:00"]
