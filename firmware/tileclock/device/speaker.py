"""The clock's voice: what clock/speech.py says, made by espeak-ng and played, apart from the loop.

The loop hands each record to `Speaker.note` and calls `Speaker.tick` at each wake; neither waits
for anything: an utterance goes into a small bounded queue (a newer request of a side replaces its
older one still waiting; when full the oldest is dropped), and a worker thread makes and plays it
(`espeak-ng -w FILE`, then `aplay`). So no press, record or panel frame waits for speech. An engine
that fails is the `speech` part's fault (the loop records it, shows it and asks again: `failing`
clears as soon as an utterance is spoken); the clock keeps time regardless.

The simulator speaks through a `WavWriter` on the loop's own thread instead (no thread, no sound
card: `tileclock sim --speech DIR`), each utterance a 16 kHz mono WAV file named by its time.
"""

import array
import os
import shutil
import subprocess
import tempfile
import threading
import wave
from collections import deque

from ..clock.speech import WARNINGS_S, merged, next_warning_ns, parse_sides, said, warning
from ..clock.timecode import NS_PER_MS, NS_PER_S

#: The voice that a grammar-based recogniser decoded best of those tried (the tests decode it):
#: espeak-ng's US English with its Klatt-style variant 4, at 140 words a minute (the default rate).
VOICE = "en-us+klatt4"
#: How many utterances may wait; more, and the oldest goes.
QUEUE_SIZE = 8
#: The longest espeak-ng or aplay may take over one utterance before it counts as failing.
ENGINE_TIMEOUT_S = 20
#: What a recogniser's acoustic model wants (and what the tests decode).
WAV_RATE = 16_000


def espeak_command(text, path, rate, volume):
    """The espeak-ng command that writes `text` as a WAV file at `path`. A whole number of minutes
    is said with a breath before `left` (a comma): run together, a recogniser heard
    `one minute two left` in `one minute left`."""
    text = text.replace(" minutes left", " minutes, left").replace(" minute left", " minute, left")
    return ["espeak-ng", "-v", VOICE, "-s", str(rate), "-a", str(volume), "-w", path, "--", text]


#: Quiet before and after an utterance in a WAV file (espeak-ng starts speaking at its first sample,
#: which a recogniser's voice detection clips), with a faint fixed hiss (a digital zero is no room).
PAD_S = 0.3
HISS = 30


def to_mono_16k(src, dst):
    """Copy a 16-bit WAV file as 16 kHz mono (espeak-ng writes 22,050 Hz): a light low-pass, then
    linear interpolation, in plain Python (a second of speech in well under a second on a Pi),
    with `PAD_S` of faint hiss before and after."""
    with wave.open(src) as given:
        rate, channels, width = given.getframerate(), given.getnchannels(), given.getsampwidth()
        data = array.array("h", given.readframes(given.getnframes()))
    if width != 2:
        raise ValueError(f"{src}: {8 * width}-bit samples, expected 16")
    if channels > 1:
        data = array.array("h", data[::channels])
    n = len(data)
    smooth = array.array("h", data)
    for i in range(1, n - 1):  # (1 2 1)/4: takes the edge off what lies above the new rate's half
        smooth[i] = (data[i - 1] + 2 * data[i] + data[i + 1]) // 4
    count = n * WAV_RATE // rate if n else 0
    out = array.array("h", bytes(2 * count))
    for j in range(count):
        x = j * rate / WAV_RATE
        i = int(x)
        a = smooth[i]
        b = smooth[i + 1] if i + 1 < n else a
        out[j] = int(a + (b - a) * (x - i))
    pad = int(PAD_S * WAV_RATE)
    out = _hiss(pad, 1) + out + _hiss(pad, 2)
    seed = 3
    for j in range(pad, len(out) - pad):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        out[j] = max(-32768, min(32767, out[j] + seed % (2 * HISS + 1) - HISS))
    with wave.open(dst, "wb") as made:
        made.setnchannels(1)
        made.setsampwidth(2)
        made.setframerate(WAV_RATE)
        made.writeframes(out.tobytes())


def _hiss(count, seed):
    """`count` samples of faint noise, the same every time (a fixed linear congruential sequence)."""
    made = array.array("h", bytes(2 * count))
    for j in range(count):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        made[j] = seed % (2 * HISS + 1) - HISS
    return made


class SpeechQueue:
    """A bounded queue of utterances, safe across threads; `put` never waits."""

    def __init__(self, size=QUEUE_SIZE):
        self._items = deque()
        self._size = size
        self._ready = threading.Condition()
        self.dropped = 0

    def put(self, item):
        with self._ready:
            if item.kind == "request":  # the newer answer replaces an older one not yet said
                stale = [old for old in self._items if old.kind == "request" and old.side == item.side]
                for old in stale:
                    self._items.remove(old)
            if len(self._items) >= self._size:
                self._items.popleft()
                self.dropped += 1
            self._items.append(item)
            self._ready.notify()

    def get(self, timeout=None):
        """The oldest utterance, or None if none came within `timeout` seconds."""
        with self._ready:
            if not self._items:
                self._ready.wait(timeout)
            return self._items.popleft() if self._items else None

    def __len__(self):
        with self._ready:
            return len(self._items)


class Espeak:
    """Says an utterance aloud: espeak-ng makes a WAV file, aplay plays it (on the default ALSA
    device: the earphone's). `run` is `subprocess.run` (a test hands a stand-in)."""

    def __init__(self, rate, volume, run=subprocess.run):
        self.rate, self.volume, self._run = rate, volume, run

    def __call__(self, utterance, t_ns):
        with tempfile.TemporaryDirectory(prefix="tileclock-speech-") as folder:
            path = os.path.join(folder, "said.wav")
            for command in (
                espeak_command(utterance.text, path, self.rate, self.volume),
                ["aplay", "-q", path],
            ):
                self._run(command, check=True, capture_output=True, timeout=ENGINE_TIMEOUT_S)


class WavWriter:
    """Writes each utterance as `tMMMMMMMMM-S.wav` (16 kHz mono; ms of the device's time, like the
    simulator's frames; S the side whose earphone it is for) into `directory`."""

    def __init__(self, directory, rate, volume, run=subprocess.run):
        self.directory, self.rate, self.volume, self._run = directory, rate, volume, run
        os.makedirs(directory, exist_ok=True)

    def __call__(self, utterance, t_ns):
        stem = os.path.join(self.directory, f"t{t_ns // NS_PER_MS:09d}-{utterance.side}")
        text = utterance.text
        if os.path.exists(stem + ".txt"):  # more said at that instant (another wake's records): one file
            with open(stem + ".txt", encoding="utf-8") as before:
                text = f"{before.read().strip()}, {text}"
        made = stem + ".22k.wav"
        self._run(
            espeak_command(text, made, self.rate, self.volume),
            check=True,
            capture_output=True,
            timeout=ENGINE_TIMEOUT_S,
        )
        to_mono_16k(made, stem + ".wav")
        os.remove(made)
        with open(stem + ".txt", "w", encoding="utf-8") as said_file:
            said_file.write(text + "\n")


class Speaker:
    """The `speech` part: hears the clock's records and says what clock/speech.py gives, for the
    sides of `setting` (a `SpeechSetting`), through `say(utterance, t_ns)`.

    `threaded`: `say` runs on a worker thread fed by a `SpeechQueue` (the service); else on the
    caller's thread, at once (the simulator writing files). `clock` is the `GameClock` (its running
    side's display, for 5:00 and 1:00)."""

    part = "speech"

    def __init__(self, clock, setting, say, threaded=True):
        self.clock = clock
        self._configured = setting.sides
        self._say = say
        self.failing = None
        self.spoken = 0
        self._due_ns = None  # when the running side's display next reaches 5:00 or 1:00
        self._queue = SpeechQueue() if threaded else None
        self._stop = threading.Event()
        self._worker = None  # started at the first utterance: a clock nobody hears runs no thread

    @property
    def sides(self):
        """The sides that hear: a director's newest `set speech=` (the clock's scene keeps it, through
        restarts and power cuts: clock/scene.py), else the config's."""
        directed = self.clock.scene.speech
        return self._configured if directed is None else parse_sides(directed)

    # --------------------------------------------------------- on the loop's thread, never waiting

    def note(self, record):
        """A record the clock made: say what it calls for."""
        sides = self.sides
        if not sides:  # nobody hears (the service's speaker with speech off): not even a look
            return
        t0_ns = self.clock.t0_ns
        for item in merged(said(record.as_dict(), sides)):
            self._give(item, t0_ns + item.t_ms * NS_PER_MS)

    def tick(self, now_ns):
        """At each wake, after its records: 5:00 or 1:00 reached on the running side's display, if
        now; then when it next falls due (the running side may have changed since)."""
        clock = self.clock
        side = clock.run
        due, self._due_ns = self._due_ns, None
        if side is None or side not in self.sides or clock.state != "running":
            return
        shown = clock.display_seconds(side, now_ns)
        if due is not None and due <= now_ns < due + NS_PER_S and shown in WARNINGS_S:
            for item in warning((due - clock.t0_ns) // NS_PER_MS, side, shown, self.sides):
                self._give(item, due)
        self._due_ns = next_warning_ns(shown, clock.used_ns(side, now_ns), now_ns)

    def next_wake_ns(self):
        """When the loop must wake for a warning, or None (a loop wake source)."""
        return self._due_ns

    def close(self):
        """Stop the worker (it finishes the utterance it is saying, at most a timeout on)."""
        self._stop.set()
        if self._worker is not None:
            self._worker.join(timeout=1)

    # ---------------------------------------------------------------- saying

    def _give(self, item, t_ns):
        if self._queue is not None:
            if self._worker is None:
                self._worker = threading.Thread(target=self._serve, name="speech", daemon=True)
                self._worker.start()
            self._queue.put(_Timed(item, t_ns))
        else:
            self._speak(item, t_ns)

    def _serve(self):
        while not self._stop.is_set():
            timed = self._queue.get(timeout=0.5)
            if timed is not None:
                self._speak(timed.utterance, timed.t_ns)

    def _speak(self, item, t_ns):
        try:
            self._say(item, t_ns)
        except Exception as error:  # noqa: BLE001 - no engine may stop the clock
            self.failing = f"{type(error).__name__}: {error}"[:200]
        else:
            self.failing = None
            self.spoken += 1


class _Timed:
    """An utterance and its instant, queued (the queue reads `kind` and `side`)."""

    def __init__(self, utterance, t_ns):
        self.utterance, self.t_ns = utterance, t_ns
        self.kind, self.side = utterance.kind, utterance.side


def engine_missing(which=shutil.which):
    """What is missing to speak: the commands not found (espeak-ng, aplay), as a list."""
    return [name for name in ("espeak-ng", "aplay") if which(name) is None]
