"""The clock's voice (device/speaker.py): never in the clock's way, a failing engine only a fault."""

import subprocess
import threading
from dataclasses import replace

from conftest import events, tap
from tileclock.clock.speech import SpeechSetting, Utterance
from tileclock.device.config_schema import Config
from tileclock.device.speaker import Espeak, Speaker, SpeechQueue, espeak_command
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

BOTH = SpeechSetting(frozenset("AB"))


def test_a_newer_request_replaces_the_older_one_still_waiting_and_the_queue_is_bounded():
    queue = SpeechQueue(size=3)
    queue.put(Utterance(1, "A", "ten minutes left", "request"))
    queue.put(Utterance(2, "A", "overtime"))
    queue.put(Utterance(3, "B", "five minutes left", "request"))
    queue.put(Utterance(4, "A", "nine minutes left", "request"))  # replaces A's at 1
    assert [(u.t_ms, u.side) for u in (queue.get(0), queue.get(0), queue.get(0))] == [
        (2, "A"),
        (3, "B"),
        (4, "A"),
    ]
    assert queue.get(0) is None
    for t in range(5):
        queue.put(Utterance(t, "A", "overtime"))
    assert len(queue) == 3 and queue.dropped == 2 and queue.get(0).t_ms == 2  # the oldest went


def sim_with(say, sides="AB"):
    config = replace(Config(), speech=SpeechSetting(frozenset(sides)))
    return Simulator(config, speech=say)


def test_a_failing_engine_is_a_fault_record_and_the_clock_keeps_time():
    said, broken = [], [True]

    def say(utterance, t_ns):
        if broken[0]:
            raise subprocess.CalledProcessError(1, ["aplay"], stderr=b"aplay: main:831: audio open error")
        said.append((t_ns, utterance.text))

    sim = sim_with(say)
    tap(sim, "B", 0)
    tap(sim, "B", 10)  # B asks: the engine fails again
    broken[0] = False
    tap(sim, "A", 20)  # A ends its turn: nothing said
    tap(sim, "STOP", 30)  # said: the fault clears
    sim.finish(40 * 10**9)
    records = [unframe(line) for line in sim.serial_lines()]
    faults = events(records, "fault", "fault_cleared")
    assert [(r["ev"], r["part"]) for r in faults] == [("fault", "speech"), ("fault_cleared", "speech")]
    assert faults[0]["detail"].startswith("CalledProcessError")
    assert [r["ev"] for r in records if r["ev"] in ("start", "switch", "pause")] == [
        "start",
        "switch",
        "pause",
    ]
    assert [text for _, text in said] == [
        "clock stopped, twenty four minutes forty left",  # A ran 20 s
        "clock stopped, twenty four minutes fifty left",  # B ran 10 s
    ]
    sim.close()


def test_no_press_waits_for_speech():
    """The service's speaker: the engine is stuck mid-utterance, yet every record is noted at once
    and the queue stays bounded; it speaks on as soon as the engine answers."""
    started, release, done = threading.Event(), threading.Event(), []

    def say(utterance, t_ns):
        started.set()
        release.wait(timeout=30)
        done.append(utterance.text)

    sim = sim_with(lambda u, t: None)
    speaker = Speaker(sim.clock, BOTH, say, threaded=True)
    sim.daemon.speaker = speaker
    sim.daemon.reactor.register_wake(speaker.next_wake_ns)
    tap(sim, "B", 0)
    assert started.wait(timeout=30)  # the worker is saying the first utterance, and stuck there
    for t in range(1, 40):
        tap(sim, "B" if t % 2 else "A", 10 * t)  # turns and requests: the loop never waits
    assert len(sim.daemon.speaker._queue) <= 8 and not done
    release.set()
    speaker.close()
    sim.close()


def test_espeak_is_asked_for_the_voice_rate_and_loudness_then_aplay_plays_it():
    ran = []

    def run(command, check, capture_output, timeout):
        assert check and capture_output and timeout
        ran.append(command)

    Espeak(140, 120, run=run)(Utterance(0, "A", "overtime"), 0)
    espeak, aplay = ran
    assert espeak[:6] == ["espeak-ng", "-v", "en-us+klatt4", "-s", "140", "-a"] and espeak[6] == "120"
    assert espeak[-2:] == ["--", "overtime"] and aplay[:2] == ["aplay", "-q"] and aplay[2] == espeak[8]
    assert espeak_command("-x", "f.wav", 150, 100)[-2:] == ["--", "-x"]  # words are never options


def test_a_directors_set_turns_speech_on_and_off_and_is_recorded(sim, tmp_path):
    """`set speech=B` is a `set` record like any other; from its instant B hears and A does not."""
    from support.speech_tools import _need_tools

    _need_tools()
    out = tmp_path / "speech"
    records = sim(
        "0 press B\n5 send set speech=B\n10 press B\n20 press A\n30 press A\n35 send set speech=off\n"
        "40 press STOP\n45 until\n",
        "--speech",
        str(out),
    )
    assert [r["speech"] for r in events(records, "set")] == ["B", ""]
    assert sorted(p.name for p in out.glob("*.wav")) == [
        "t000000000-A.wav",
        "t000000000-B.wav",
        "t000010000-B.wav",
    ]
    assert (
        out / "t000010000-B.txt"
    ).read_text() == "twenty five minutes left\n"  # B asked; A's ask at 30 unheard
    assert sim("0 send set speech=C\n1 until\n")[-2]["ev"] == "error"


def test_a_directors_speech_setting_outlives_a_restart_a_power_cut_and_new_games(tmp_path):
    """The config names no side; the director's `set speech=B` holds after the service restarts,
    after a power cut and in the games after it (each `new_game` says it), until set again."""
    from support.game_end import end_game
    from tileclock.clock.timecode import NS_PER_S
    from tileclock.device.assembly import open_journal
    from tileclock.device.hardware.virtual import VirtualTime
    from tileclock.wire.protocol import with_crc

    state, heard, time = str(tmp_path / "state"), [], VirtualTime()

    def start(boot_id, clock_time):
        say = lambda utterance, t_ns: heard.append(utterance.side)  # noqa: E731 - who hears
        return Simulator(Config(), journal=open_journal(state), time=clock_time, boot_id=boot_id, speech=say)

    def made(sim):
        return [unframe(line) for line in sim.serial_lines()]

    first = start("boot-1", time)
    first.send(with_crc("set speech=B"), 1 * NS_PER_S)
    tap(first, "B", 2)  # A's clock starts: B hears it
    assert heard and set(heard) == {"B"}
    first.close()

    heard.clear()
    again = start("boot-1", time)  # the service restarted; the Pi did not
    tap(again, "A", 10)  # B's clock runs
    tap(again, "A", 12)  # A asks for its time (B's runs): A has no speech, so nothing for A
    tap(again, "B", 14)  # A's runs
    assert heard == []  # a turn's end is not said
    tap(again, "B", 16)  # B asks for its time
    assert heard and set(heard) == {"B"}
    end_game(again, 20)
    again.set_button("STOP", True, 30 * NS_PER_S)  # hold STOP on the ended game: a new game
    again.set_button("STOP", False, int(32.5 * NS_PER_S))
    again.run_to(33 * NS_PER_S)
    assert events(made(again), "new_game")[-1]["speech"] == "B"
    again.close()

    heard.clear()
    cut = start("boot-2", VirtualTime())  # a power cut, in the new game: still B
    tap(cut, "B", 1)
    assert heard and set(heard) == {"B"}
    cut.send(with_crc("set speech=off"), 3 * NS_PER_S)
    cut.close()

    heard.clear()
    off = start("boot-2", cut.time)  # off holds too: the config's setting would be no different
    tap(off, "A", 5)
    tap(off, "B", 6)
    assert heard == []
    off.close()


def test_the_configs_speech_holds_until_a_director_sets_it(tmp_path):
    """No `set speech=` recorded: a restart speaks to the config's sides, and new games carry nothing."""
    from tileclock.device.assembly import open_journal

    state, heard = str(tmp_path / "state"), []
    config = replace(Config(), speech=SpeechSetting(frozenset("A")))

    def start():
        return Simulator(config, journal=open_journal(state), speech=lambda u, t: heard.append(u.side))

    start().close()
    sim = start()
    tap(sim, "B", 1)
    assert heard and set(heard) == {"A"}
    records = [unframe(line) for line in sim.serial_lines()]
    assert all("speech" not in r for r in events(records, "new_game", "set"))
    sim.close()
