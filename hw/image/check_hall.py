"""make image-check's hall (issue 42, point 6): a hall on this machine for one boot of the card.

    check_hall.py prepare WORK   # hall-setup's files in WORK/hall, the card's settings WORK/settings.txt
    check_hall.py serve WORK     # the broker, a time server and the director's feed, until the
                                 # booted clock has taken a sealed round start (or the time is up)

`prepare` runs `tileclock hall-setup WORK/hall --boards 7 --cards WORK/cards --address 10.0.2.2`
(10.0.2.2 is this machine as QEMU's user network shows it to the guest), and the card's settings
file is board 7's as hall-setup wrote it (id, password, command key, the hall's CA, time server),
with one line added: `hall_port`, the free port the check's broker listens on.

`serve` runs Debian's mosquitto with hall-setup's own tileclock.conf (its TLS listener moved to
127.0.0.1 on that port, where QEMU's user network delivers the guest's connections to 10.0.2.2), a
small NTP server on 127.0.0.1:123 (the guest's chrony asks 10.0.2.2:123; it answers with this
machine's clock and never sets it), and the director's side as `tileclock hall --keys` runs it:
`HallFeed` with hall-setup's tileclock.keys and CA, and the page's `RoundControl`. Once the clock is
online it starts round 1 on board 7, ten seconds ahead, sealed with the clock's key; a clock not
yet synchronised refuses it (`unsynchronised`), and the start is sent again every few seconds until
the clock takes it: the check passes when the clock's `set` record (round 1, that start) and then
its `round_start` record have come back through the broker. Lines start with `HALL`; the last says
`HALL pass` or `HALL FAIL ...`.
"""

import argparse
import contextlib
import io
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

BOARD = 7
CLOCK = f"board-{BOARD}"
#: this machine, as QEMU's user network (slirp) shows it to the guest
GUEST_HOST = "10.0.2.2"
#: the NTP era's start (1900) to the Unix epoch's, in seconds
NTP_EPOCH = 2_208_988_800
#: how often an unsynchronised clock is asked again to start the round
RETRY_S = 5.0


def say(text):
    print(f"HALL {text}", flush=True)


def prepare(work):
    """hall-setup's files, the card's settings and the broker's config for this machine."""
    from tileclock.cli import main
    from tileclock.director.hall.broker import free_port

    hall, cards = work / "hall", work / "cards"
    (work / "base.txt").write_text("rules = nsa1997\npanels = sh1106\n")
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        status = main(
            [
                "hall-setup",
                str(hall),
                "--boards",
                str(BOARD),
                "--cards",
                str(cards),
                "--address",
                GUEST_HOST,
                "--card-base",
                str(work / "base.txt"),
            ]
        )
    if status != 0:
        raise SystemExit(f"hall-setup failed ({status}): {said.getvalue()}")
    found = re.search(r"^  director = (\S+)$", said.getvalue(), re.MULTILINE)
    if found is None:
        raise SystemExit("hall-setup did not say the director's password")
    password = work / "director.password"
    password.write_text(found[1] + "\n")
    password.chmod(0o600)
    port = free_port()
    card = (cards / f"board-{BOARD}" / "tileclock-settings.txt").read_text()
    settings = work / "settings.txt"
    settings.write_text(card + f"# image-check: the broker on this machine's free port\nhall_port = {port}\n")
    settings.chmod(0o600)
    conf = (hall / "tileclock.conf").read_text()
    if "listener 8883\n" not in conf or "listener 1883" in conf:
        raise SystemExit("hall-setup's tileclock.conf has not one TLS listener on 8883")
    conf = conf.replace("listener 8883\n", f"listener {port} 127.0.0.1\n")
    conf = conf.replace("/etc/mosquitto/certs/", f"{hall}/").replace("/etc/mosquitto/", f"{hall}/")
    conf += f"persistence_location {hall}/\nlog_dest file {work}/mosquitto.log\n"
    conf += "user root\n" if os.geteuid() == 0 else ""
    (work / "broker.conf").write_text(conf)
    (work / "port").write_text(f"{port}\n")
    lines = [line.split(" = ", 1)[0] for line in card.splitlines() if " = " in line]
    say(f"hall-setup's card for board {BOARD}: {', '.join(lines)}; hall_port = {port} added")


def ntp_answer(request, received_s, now=time.time):
    """The server's answer (RFC 5905, mode 4) to a client's NTP request, or None for anything else:
    stratum 1, this machine's clock, the client's transmit time as the origin."""
    if len(request) < 48 or request[0] & 0x07 != 3:
        return None
    version = (request[0] >> 3) & 0x07

    def stamp(seconds):
        whole = int(seconds)
        return struct.pack("!II", whole + NTP_EPOCH, int((seconds - whole) * 2**32) & 0xFFFFFFFF)

    head = struct.pack("!BBbb", (version << 3) | 4, 1, request[2], -20)
    head += struct.pack("!II", 0, 0x10) + b"HOST"  # root delay, root dispersion (~0.2 ms), refid
    return head + stamp(received_s - 1) + request[40:48] + stamp(received_s) + stamp(now())


def serve_time(stop):
    """Answer NTP requests on 127.0.0.1:123 until `stop` is set; False if the port is taken."""
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        server.bind(("127.0.0.1", 123))
    except OSError as error:
        server.close()
        say(f"the time server: port 123 is taken here ({error.strerror}): the guest asks what answers there")
        return False
    server.settimeout(0.5)

    def run():
        answered = 0
        while not stop.is_set():
            try:
                request, peer = server.recvfrom(512)
            except TimeoutError:
                continue
            received = time.time()
            answer = ntp_answer(request, received)
            if answer is not None:
                server.sendto(answer, peer)
                answered += 1
                if answered == 1:
                    say("the time server answered the guest's chrony")
        server.close()

    threading.Thread(target=run, daemon=True).start()
    return True


def broker_up(work):
    """Debian's mosquitto on hall-setup's config (its TLS listener on the check's port)."""
    from tileclock.director.hall.broker import mosquitto_binary

    binary = mosquitto_binary()
    if binary is None:
        raise SystemExit("mosquitto is not installed (apt-get install mosquitto)")
    port = int((work / "port").read_text())
    broker = subprocess.Popen([binary, "-c", str(work / "broker.conf")], start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return broker, port
        except OSError:
            time.sleep(0.2)
    broker.kill()
    raise SystemExit(f"mosquitto did not listen on {port} (log: {work}/mosquitto.log)")


def serve(work, timeout_s):
    from tileclock.director.hall.feed import HallFeed
    from tileclock.director.hall.round_control import RoundControl
    from tileclock.wire.seal import read_keys

    hall = work / "hall"
    # the check's end (SIGTERM) ends the broker too: it runs in a session of its own
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    stop = threading.Event()
    serve_time(stop)
    broker, port = broker_up(work)
    say(f"broker: mosquitto with hall-setup's tileclock.conf, TLS only, on 127.0.0.1:{port}")
    records = []
    feed = HallFeed(
        "127.0.0.1",
        port,
        (work / "director.password").read_text().strip(),
        str(work / "records"),
        tls_ca=str(hall / "tileclock-ca.pem"),
        keys=read_keys((hall / "tileclock.keys").read_text()),
    )
    feed.subscribe(lambda clock, record, _log: records.append(record) if clock == CLOCK else None)
    stepping = threading.Thread(target=feed.run, args=(stop.is_set,), daemon=True)
    feed.start()
    stepping.start()
    started = time.monotonic()

    def board():
        return next((b for b in feed.snapshot()["boards"] if b["clock"] == CLOCK), None)

    def wait(predicate, what):
        while time.monotonic() - started < timeout_s:
            if broker.poll() is not None:
                raise RuntimeError(f"mosquitto stopped (log: {work}/mosquitto.log)")
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        raise RuntimeError(f"no {what} after {timeout_s} s")

    try:
        # online (its status) and heard from as board 7 (its records), as the page needs to start it
        shown = wait(
            lambda: (b := board()) and b["online"] and b["board"] == str(BOARD) and b, f"{CLOCK} online"
        )
        tls = "in the clear" if shown["in_the_clear"] else "TLS"
        say(f"{CLOCK} online ({tls}) {time.monotonic() - started:.0f} s after the hall started")
        if shown["in_the_clear"]:
            raise RuntimeError(f"{CLOCK} says it reached the broker in the clear")
        rounds = RoundControl(feed)
        start_ms, sent, took = None, 0.0, None
        while took is None:
            if time.monotonic() - sent >= RETRY_S:
                sent = time.monotonic()
                try:
                    start_ms = rounds.start(1, "", str(BOARD))["start_ms"]  # sealed by the feed: --keys
                except ValueError as error:  # the page's refusal (a board not heard from): again
                    say(f"the page refused the start: {error}")
                else:
                    say(f"sent: set round=1 start={start_ms}, sealed with {CLOCK}'s key")
            for record in list(records):
                if record.get("ev") == "set" and record.get("start_ms") == start_ms:
                    took = record
                elif record.get("ev") == "error" and record.get("refused"):
                    say(f"refused: {record.get('refused')}: {str(record.get('detail', ''))[:100]}")
                    records.remove(record)
            if time.monotonic() - started > timeout_s:
                raise RuntimeError(f"{CLOCK} took no round start in {timeout_s} s")
            time.sleep(0.2)
        say(f"{CLOCK} took it: its set record (seq {took.get('seq')}, round {took.get('round')})")
        fired = wait(
            lambda: next((r for r in records if r.get("ev") == "round_start"), None),
            f"round_start record from {CLOCK}",
        )
        late = (fired.get("wall_ms") or 0) - start_ms if fired.get("wall_ms") else None
        say(
            f"{CLOCK} started the round: its round_start record (start_ms {fired.get('start_ms')}"
            + (f", {late:+d} ms by its own clock" if late is not None else "")
            + f"), {time.monotonic() - started:.0f} s after the hall started"
        )
        seen = board()
        if seen and seen.get("time"):
            say(f"{CLOCK}'s time as the hall sees it: {seen['time']}")
        say("pass")
        return 0
    except RuntimeError as error:
        say(f"FAIL {error}")
        return 1
    finally:
        stop.set()
        feed.close()
        broker.terminate()
        try:
            broker.wait(10)
        except subprocess.TimeoutExpired:
            broker.kill()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="check_hall.py")
    parser.add_argument("step", choices=("prepare", "serve"))
    parser.add_argument("work", type=Path)
    parser.add_argument("--timeout", type=float, default=1500.0)
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.step == "prepare":
        prepare(args.work)
        return 0
    return serve(args.work, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
