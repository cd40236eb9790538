"""Storage faults on real filesystems: a card that fills up, one that turns read-only under the clock,
a clock started on a read-only card, and a state directory the service user cannot write.

The cards are small ext4 filesystems on loop devices, which only root may mount: as another user
those tests are skipped, saying why (CI runs as root). Each asserts what a director would check:
the clock ran on, time was charged exactly, and every record went out once, with a unique seq, and
reached the card, in order and once, when it took records again.
"""

import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

from conftest import charged, events, tap, used_at_switches
from support.service_user import ROOT, as_service_user
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.doctor import FAIL, OK, check_state_dir
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.journal import Journal
from tileclock.director.records.history import iter_records
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

S = NS_PER_S


class Card:
    """A small ext4 filesystem on a loop device, mounted at `path`."""

    def __init__(self, folder):
        self.image = os.path.join(folder, "card.img")
        self.path = os.path.join(folder, "card")
        os.mkdir(self.path)
        subprocess.run(["truncate", "-s", "8M", self.image], check=True)
        # no blocks reserved for root: the clock (root here) must meet a full card as its user would
        subprocess.run(["mkfs.ext4", "-q", "-m", "0", self.image], check=True, capture_output=True)
        self.mount()

    def mount(self, *options):
        done = subprocess.run(
            ["mount", "-o", ",".join(("loop", "errors=remount-ro", *options)), self.image, self.path],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            pytest.skip(f"cannot mount a loop filesystem here: {done.stderr.strip()}")

    def unmount(self):
        subprocess.run(["umount", self.path], check=True, capture_output=True)

    def fill(self):
        """Write a file until the card is full, to the last byte."""
        fd = os.open(os.path.join(self.path, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            for chunk in (65536, 4096, 64, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * chunk)  # ext4 refuses at once what it cannot place
                except OSError:
                    os.fsync(fd)
        finally:
            os.close(fd)

    def free(self):
        os.unlink(os.path.join(self.path, "filler"))

    def turn_read_only(self):
        """What a failing card does: the kernel finds an error and remounts it read-only."""
        device = os.path.basename(os.path.realpath(self._device()))
        with open(f"/sys/fs/ext4/{device}/trigger_fs_error", "w") as trigger:
            trigger.write("tileclock test\n")

    def replug(self):
        """The card taken out, checked and put back: unmount, fsck, mount."""
        self.unmount()
        subprocess.run(["e2fsck", "-f", "-y", self.image], capture_output=True)
        self.mount()

    def _device(self):
        return subprocess.run(
            ["findmnt", "-n", "-o", "SOURCE", self.path], capture_output=True, text=True, check=True
        ).stdout.strip()


@pytest.fixture
def card(tmp_path):
    if not ROOT:
        pytest.skip(
            "mounting a loop filesystem needs root (CI runs as root): real full and read-only cards not tested"
        )
    if not shutil.which("mkfs.ext4"):
        pytest.skip("mkfs.ext4 is not installed (e2fsprogs)")
    made = Card(str(tmp_path))
    yield made
    subprocess.run(["umount", "-l", made.path], capture_output=True)


def records_of(lines):
    return [unframe(line) for line in lines]


def on_card(folder):
    return list(iter_records(folder))


def assert_every_record_once(sent, folder):
    """Every record sent went out once with a unique seq, and is on the card, in order, once."""
    seqs = [r["seq"] for r in sent]
    assert seqs == sorted(set(seqs))
    kept = [r["seq"] for r in on_card(folder)]
    assert kept == sorted(set(kept)) and set(seqs) <= set(kept)


#: The presses of `play_through`: B starts A's turn at 0, then the running side ends its turn
#: every second from 10 s (A at 10, B at 11, ...), and A ends the last turn at 45.
MID_GAME = [(0, "B"), *((t_s, "AB"[t_s % 2]) for t_s in range(10, 40)), (45, "A")]


def play_through(sim, fault, mend):
    """A game in which the card fails after 10 s (`fault`) and is mended at 40 s (`mend`): a press
    every second meanwhile (more than a disk block of records); returns every record sent."""
    sent = []
    tap(sim, "B", 0)  # A runs
    fault()
    for t_s, button in MID_GAME[1:-1]:
        tap(sim, button, t_s)
        sent += records_of(sim.serial_lines())
    assert sim.daemon.alerts == ("DISK FAULT",)  # shown; the clock keeps time
    mend()
    sim.run_to(42 * S)  # tried again every second
    assert sim.daemon.alerts == ()
    tap(sim, *reversed(MID_GAME[-1]))
    sim.finish(50 * S)
    sent += records_of(sim.serial_lines())
    return sent


@pytest.mark.parametrize("fault", ["fills up", "turns read-only and is put back"])
def test_a_card_that_fails_mid_game(card, fault):
    fail, mend, said = {
        "fills up": (card.fill, card.free, "No space"),
        "turns read-only and is put back": (card.turn_read_only, card.replug, "Read-only"),
    }[fault]
    folder = os.path.join(card.path, "journal")
    sim = Simulator(Config(), journal=Journal.open(folder))
    sent = records_of(sim.serial_lines()) + play_through(sim, fail, mend)
    sim.close()
    faults = [r for r in sent if r.get("part") == "journal"]
    assert [r["ev"] for r in faults] == ["fault", "fault_cleared"] and said in faults[0]["detail"]
    assert used_at_switches(sent) == charged(MID_GAME)  # every turn, edge to edge, through the fault
    assert_every_record_once(sent, folder)


def test_a_clock_started_on_a_read_only_card_takes_its_game_up_and_writes_when_it_can(card):
    folder = os.path.join(card.path, "journal")
    sim = Simulator(Config(), journal=Journal.open(folder), boot_id="b")
    tap(sim, "B", 0)
    sim.close()
    before = on_card(folder)
    card.unmount()
    card.mount("ro")
    again = Simulator(Config(), journal=Journal.open(folder), boot_id="b2")
    presses = [(10, "A"), (11.25, "B"), (14.5, "A")]  # B's turn resumed, then each side's
    tap(again, "A", 10)
    tap(again, "B", 11.25)
    sent = records_of(again.serial_lines())
    assert again.daemon.alerts == ("DISK FAULT",)
    assert {"boot", "recovered", "fault", "resume"} <= {r["ev"] for r in sent}
    assert min(r["seq"] for r in sent) > max(r["seq"] for r in before)
    card.replug()  # mounted read-write again
    again.run_to(13 * S)  # tried again every second
    assert again.daemon.alerts == ()
    tap(again, "A", 14.5)
    again.close()
    sent += records_of(again.serial_lines())
    [recovered] = events(sent, "recovered")
    taken_up = (recovered["A"]["used_ms"], recovered["B"]["used_ms"])
    assert used_at_switches(sent) == charged(presses, used=taken_up)  # each turn, edge to edge
    assert_every_record_once(before + sent, folder)


# --- tileclock run itself, as the service user


def run_clock(state_dir, folder):
    """`tileclock run --simulate` on a pty, as the service user, in `folder`; returns the process
    and the pty's master end."""
    master, slave = os.openpty()
    os.chmod(os.ttyname(slave), 0o666)
    config = os.path.join(folder, "config.toml")
    with open(config, "w") as file:
        file.write(f'[clock]\ncheckpoint_s = 1\n[serial]\nport = "{os.ttyname(slave)}"\n')
    script = os.path.join(folder, "game.txt")
    with open(script, "w") as file:
        file.write("0.3 press B\n1.3 press A\n")
    os.chmod(config, 0o644)
    os.chmod(script, 0o644)
    command = [sys.executable, *"-m tileclock run --simulate --stay".split(), "--config", config]
    process = subprocess.Popen(
        as_service_user([*command, "--state-dir", state_dir, "--script", script]),
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, HOME=folder),
    )
    return process, master, slave


def read_records(master, want, timeout_s=20):
    import time

    data, deadline = b"", time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            data += os.read(master, 65536)
            got = [unframe(line) for line in data.decode().splitlines()[: data.count(b"\n")]]
            if want(got):
                return got
    raise AssertionError(f"the clock did not say it: {data[-500:]!r}")


@pytest.mark.parametrize("where", ["unwritable state directory", "read-only card"])
def test_tileclock_run_never_stops_for_its_storage(where, request):
    folder = tempfile.mkdtemp(prefix="tileclock-storage-")
    os.chmod(folder, 0o755)  # the service user must reach it
    try:
        if where == "read-only card":
            card = request.getfixturevalue("card")
            state_dir = card.path
            card.unmount()
            card.mount("ro")
        else:
            state_dir = os.path.join(folder, "state")
            os.mkdir(state_dir, 0o555)  # owned by root (or us), not writable by the service user
            os.chmod(state_dir, 0o555)
        records = play_until_a_switch(state_dir, folder)
        faults = [r for r in records if r["ev"] == "fault" and r["part"] == "journal"]
        assert faults, records  # said on the line (and shown as DISK FAULT)
        assert [r["ev"] for r in records if r["ev"] in ("start", "switch")] == ["start", "switch"]
        seqs = [r["seq"] for r in records]
        assert seqs == sorted(set(seqs))
        start, switch = [r for r in records if r["ev"] in ("start", "switch")]
        # A ran from the first press's edge to the second's, charged exactly
        assert switch["A"]["used_ms"] == (switch["at_ns"] - start["at_ns"]) // 1_000_000
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def play_until_a_switch(state_dir, folder):
    """`tileclock run` as the service user (`run_clock`) until it sends a switch, then stopped: it
    must still be running (a storage fault is never a reason to stop) and stop cleanly. Returns
    the records it sent."""
    process, master, slave = run_clock(state_dir, folder)
    try:
        records = read_records(master, lambda got: any(r["ev"] == "switch" for r in got))
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        return records
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
        os.close(slave)


def test_doctor_names_a_state_directory_it_cannot_write_and_the_fix():
    folder = tempfile.mkdtemp(prefix="tileclock-doctor-")
    os.chmod(folder, 0o755)  # the service user must reach it
    state = os.path.join(folder, "state")
    os.mkdir(state)
    os.chmod(state, 0o555)
    try:
        done = subprocess.run(
            as_service_user(
                [
                    sys.executable,
                    "-m",
                    "tileclock",
                    "doctor",
                    "--config",
                    "/nonexistent",
                    "--state-dir",
                    state,
                ]
            ),
            capture_output=True,
            text=True,
        )
        lines = done.stdout.splitlines()
        at = next(i for i, line in enumerate(lines) if "state directory" in line)
        assert lines[at].startswith("FAIL") and "Permission denied" in lines[at], done.stdout
        assert "chown" in lines[at + 1], done.stdout  # and how to fix it
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not ROOT, reason="judging for another user needs a folder it does not own: run as root")
def test_doctor_run_by_root_judges_the_state_directory_as_the_service_user_would(tmp_path):
    """Root writes anywhere, so a doctor run by root must not say `writable` where the service
    cannot write, nor `Permission denied` where its group may (a healthy install is 0750)."""
    state = tmp_path / "state"
    state.mkdir(mode=0o750)
    os.chmod(tmp_path, 0o755)
    nobody = pwd.getpwnam("nobody")
    [check] = check_state_dir(str(state), service_user="nobody")  # root's folder, 0750
    assert check.status == FAIL and "Permission denied for nobody" in check.seen
    assert "chown" in check.fix
    os.chown(state, 0, nobody.pw_gid)  # the service's group, as systemd's StateDirectory makes it
    os.chmod(state, 0o770)
    [check] = check_state_dir(str(state), service_user="nobody")
    assert check.status == OK and check.seen.endswith("is writable by nobody")
    os.chmod(state, 0o750)  # the group may read, not write
    assert check_state_dir(str(state), service_user="nobody")[0].status == FAIL
    os.chown(state, nobody.pw_uid, nobody.pw_gid)
    assert check_state_dir(str(state), service_user="nobody")[0].status == OK


# --- a start-up repair the card will not take: finished later, never by cutting bytes not kept


def remount(card, mode):
    subprocess.run(["mount", "-o", f"remount,{mode}", card.path], check=True, capture_output=True)


def a_game_on(card):
    """A game played on the card and stopped cleanly; returns its folder and its records."""
    folder = os.path.join(card.path, "journal")
    sim = Simulator(Config(), journal=Journal.open(folder), boot_id="b1")
    for t_s, button in ((0, "B"), (10, "A"), (20, "B")):
        tap(sim, button, t_s)
    sim.close()
    return folder, on_card(folder)


def restarted_while(folder, fault, mend):
    """The clock started while the card has `fault`, a press, the card mended, on a few seconds;
    returns every record it sent."""
    fault()
    sim = Simulator(Config(), journal=Journal.open(folder), boot_id="b2")
    tap(sim, "A", 1)  # B's turn resumed
    assert sim.daemon.alerts == ("DISK FAULT",)
    mend()
    sim.run_to(5 * S)  # tried again every second
    assert sim.daemon.alerts == ()
    tap(sim, "B", 6)  # and ended: B charged exactly those 5 s
    sim.close()
    sent = records_of(sim.serial_lines())
    [recovered] = events(sent, "recovered")
    taken_up = (recovered["A"]["used_ms"], recovered["B"]["used_ms"])
    assert used_at_switches(sent) == charged([(1, "A"), (6, "B")], used=taken_up)
    return sent


def test_a_lost_line_ending_on_a_read_only_card_costs_no_record_when_it_takes_writes_again(card):
    folder, before = a_game_on(card)
    path = os.path.join(folder, "000000000000.log")
    whole = open(path, "rb").read()
    open(path, "wb").write(whole[:-1])  # the last record's line ending never reached the card
    sent = restarted_while(folder, lambda: remount(card, "ro"), lambda: remount(card, "rw"))
    assert [r["seq"] for r in on_card(folder)][: len(before)] == [r["seq"] for r in before]
    assert open(path, "rb").read() == whole  # the repair finished once the card took writes
    assert_every_record_once(before + sent, folder)


def test_a_torn_record_on_a_full_card_is_kept_aside_before_anything_is_cut(card, caplog):
    folder, before = a_game_on(card)
    path = os.path.join(folder, "000000000000.log")
    torn = open(path, "rb").read()[:-40]  # power lost while the last record was being written
    open(path, "wb").write(torn)
    sent = restarted_while(folder, card.fill, card.free)
    # the service's log (journalctl) says why the repair waited, and what it found
    assert f"journal {folder}: [Errno 28] No space left on device" in caplog.text
    assert f"journal {folder}: {path} damaged (line {len(before)}: cut off mid-write)" in caplog.text
    kept = os.path.join(folder, "damaged")
    assert [open(os.path.join(kept, name), "rb").read() for name in os.listdir(kept)] == [torn]
    assert [r["seq"] for r in on_card(folder)][: len(before) - 1] == [r["seq"] for r in before[:-1]]
    assert_every_record_once(before[:-1] + sent, folder)
    assert min(r["seq"] for r in sent) >= len(before)  # the torn record's seq is never used again
    # the game goes on in a segment of its own (boot, recovered...): the next start takes it up
    # whole, from its opening in the segment before
    sim = Simulator(Config(), journal=Journal.open(folder), boot_id="b3")
    sim.close()
    later = records_of(sim.serial_lines())
    assert "recovered" in [r["ev"] for r in later]
    assert not [r for r in later if r["ev"] == "fault" and "opening" in r["detail"]]


def test_a_torn_record_in_a_later_game_on_a_full_card_is_kept_aside_once_the_card_has_room(card):
    """The same in a game after the first (its segment's name is not all zeros): the repair that
    waited for room is made, on that segment, once the card takes writes."""
    folder = os.path.join(card.path, "journal")
    sim = Simulator(Config(), journal=Journal.open(folder), boot_id="b1")
    tap(sim, "STOP", 1, hold_s=3)  # end the first game (nobody played it): hold, let go...
    tap(sim, "STOP", 5)  # ...confirm
    tap(sim, "STOP", 6, hold_s=3)  # and open the next: its own segment
    for t_s, button in ((10, "B"), (20, "A"), (30, "B")):
        tap(sim, button, t_s)
    sim.close()
    name = max(name for name in os.listdir(folder) if name.endswith(".log"))
    first = int(name[:-4])
    assert first > 0
    before = [r for r in on_card(folder) if r["seq"] >= first]  # (the full card may prune the first game)
    path = os.path.join(folder, name)
    torn = open(path, "rb").read()[:-40]  # power lost while the last record was being written
    open(path, "wb").write(torn)
    sent = restarted_while(folder, card.fill, card.free)
    kept = os.path.join(folder, "damaged")
    assert [open(os.path.join(kept, name), "rb").read() for name in os.listdir(kept)] == [torn]
    after = [r["seq"] for r in on_card(folder) if r["seq"] >= first]
    assert after[: len(before) - 1] == [r["seq"] for r in before[:-1]]
    assert_every_record_once(before[:-1] + sent, folder)


def test_a_record_that_cannot_be_played_back_on_a_full_card_is_left_out_once_the_card_has_room(card):
    """The start finds a record it cannot play back while the card is full: the repair waits, and
    when the card has room it leaves that record out (the next start finds no damage)."""
    from support.journals import reframed, rich_game, write_game

    lines = list(rich_game())
    lines[7] = reframed(lines[7], ev="arrived", player="A")  # A was never late: nobody can arrive
    folder = os.path.join(card.path, "journal")
    write_game(folder, lines)
    card.fill()
    sim = Simulator(Config(), journal=Journal.open(folder), time=VirtualTime(200 * S, "boot-2"))
    assert sim.daemon.alerts == ("DISK FAULT",)
    card.free()
    sim.run_to(205 * S)  # tried again every second
    sim.close()
    assert 7 not in [r["seq"] for r in on_card(folder)]
    sim = Simulator(Config(), journal=Journal.open(folder), time=VirtualTime(300 * S, "boot-3"))
    sim.close()
    assert [r for r in records_of(sim.serial_lines()) if r["ev"] == "fault"] == []


# --- seqs never used twice where the mark of used seqs cannot be moved


def test_a_card_read_only_across_boots_never_has_a_seq_used_twice(card, tmp_path):
    folder, before = a_game_on(card)  # a clean stop: the mark says the next start goes on from 5
    remount(card, "ro")
    run = tmp_path / "run"  # systemd's RuntimeDirectory: emptied by every boot, kept across restarts
    run.mkdir()
    sent, skips = [], []
    for boot in ("b2", "b3", "b3"):  # two boots, and a restart in the second
        if boot != "b3" or not os.listdir(run):
            shutil.rmtree(run)
            run.mkdir()
        sim = Simulator(Config(), journal=Journal.open(folder, runtime=(str(run), boot)), boot_id=boot)
        tap(sim, "A", 1)
        sim.close()
        made = records_of(sim.serial_lines())
        assert sim.daemon.alerts == ("DISK FAULT",)
        skips.append([r["skipped"] for r in made if r["ev"] == "fault" and "skipped" in r])
        sent += made
    seqs = [r["seq"] for r in before + sent]
    assert len(seqs) == len(set(seqs)) and max(seqs) < 10**12  # never twice; a segment's name holds them
    assert len(skips[0]) == len(skips[1]) == 1 and skips[2] == []  # said at each boot; the restart goes on
    assert skips[0][0][0] == len(before) and skips[1][0][0] == len(before)
    remount(card, "rw")
    sim = Simulator(Config(), journal=Journal.open(folder, runtime=(str(run), "b4")), boot_id="b4")
    sim.close()
    later = [r["seq"] for r in records_of(sim.serial_lines())]
    assert not set(later) & set(seqs)  # and a start once the card takes writes uses none of them


def test_a_journal_folder_the_service_cannot_read_never_has_its_seqs_used_again():
    folder = tempfile.mkdtemp(prefix="tileclock-unreadable-")
    os.chmod(folder, 0o755)  # the service user must reach it
    state = os.path.join(folder, "state")
    try:
        sim = Simulator(Config(), state_dir=state)
        tap(sim, "B", 0)
        sim.close()
        seqs = [r["seq"] for r in records_of(sim.serial_lines())]
        os.chmod(state, 0o755)
        os.chmod(os.path.join(state, "journal"), 0)
        skips = []
        for _boot in range(2):  # no runtime folder: each start is a new boot
            records = play_until_a_switch(state, folder)
            seqs += [r["seq"] for r in records]
            skips += [r["skipped"] for r in records if r["ev"] == "fault" and "skipped" in r]
        assert len(seqs) == len(set(seqs)) and max(seqs) < 10**12  # never a seq used twice
        assert len(skips) == 2 and all(first == 0 for first, _ in skips)  # and each start says so
    finally:
        os.chmod(os.path.join(state, "journal"), 0o755)
        shutil.rmtree(folder, ignore_errors=True)
