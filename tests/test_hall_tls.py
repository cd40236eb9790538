"""The hall's broker speaks TLS (docs/hall.md, "Encrypted on the Wi-Fi"): issue 37's eavesdropper
on the hall's Wi-Fi reads the director's password, a clock's password and the sealed commands off
port 1883. Here every byte between the clients and a real mosquitto goes through a relay that keeps
them, and none of those is in it; a clock given another CA refuses the broker and says why;
`hall-setup` writes the CA, the broker's certificate and key and a config with no plain listener
(mosquitto runs it); the spectators' bridge and the settings file's `hall_ca` follow."""

import os
import re
import secrets
import socket
import ssl
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS, tap
from support.command_line import run
from support.hall_helpers import Spectator, hall_config, wait_for
from support.relay import Relay
from tileclock.cli import main
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config_schema import Config
from tileclock.director.hall.broker import INSTALL_HINT, LocalBroker, free_port, mosquitto_binary
from tileclock.director.hall.feed import HallFeed
from tileclock.director.hall.tls import BROKER_KEY, CA_KEY, local_tls, make_tls
from tileclock.sim.simulator import Simulator
from tileclock.wire.seal import read_keys

KEY = secrets.token_hex(32)


@pytest.fixture
def tls_broker(tmp_path):
    """The hall's broker as hall-setup makes it: TLS only, with a CA of its own (`ca_file`)."""
    if mosquitto_binary() is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have mosquitto: {INSTALL_HINT}")
        pytest.skip(f"mosquitto is not installed: {INSTALL_HINT}")
    local = LocalBroker(tmp_path / "tls-broker", BROKER_USERS, tls=True).start()
    yield local
    local.stop()


def sealed_hall(broker, tmp_path, port, tls_ca):
    """A clock c1 with a command key and the director's feed with the keys, both on `port`."""
    hall = replace(hall_config(broker, "c1"), port=port, key=KEY, tls_ca=tls_ca)
    sim = Simulator(
        replace(Config(clock_id="c1"), hall=hall), state_dir=str(tmp_path / "c1"), refresh_on_ticks=False
    )
    # the director's wall clock: the clock's own, as chrony keeps them (a sealed command is fresh)
    feed = HallFeed(
        "127.0.0.1",
        port,
        BROKER_USERS["director"],
        str(tmp_path / "out"),
        tls_ca=tls_ca,
        keys=read_keys(f"c1 {KEY}"),
        wall=lambda: (SIM_EPOCH_NS + sim.time()) / NS_PER_S,
    ).start()
    return sim, feed


def a_sealed_command_through(broker, tmp_path, tls_ca):
    """Both sides through a relay to `broker`: records out, one sealed command in, applied. The
    relay's bytes, and the passwords and the sealed line an eavesdropper would look for."""
    relay = Relay(broker.port)
    sim, feed = sealed_hall(broker, tmp_path, relay.port, tls_ca)
    sent = []
    publish = feed.connection.client.publish
    feed.connection.client.publish = lambda name, payload, **kw: (
        sent.append(payload),
        publish(name, payload, **kw),
    )[1]
    try:
        wait_for(lambda: feed.connection.connected.is_set() and sim.uplink._connected, what="both online")
        tap(sim, "B", 1)
        tap(sim, "STOP", 5)  # stopped: the director's correction applies
        feed.command("adjust A +60000", "c1")
        wait_for(
            lambda: (sim.daemon.pump(sim.time()), [r for r in sim.journal.records() if r["ev"] == "adjust"])[
                1
            ],
            what="the director's sealed adjust, applied",
        )
    finally:
        feed.close()
        sim.close()
        relay.close()
    (line,) = sent
    secrets_ = {
        "the director's password": BROKER_USERS["director"].encode(),
        "the clock's password": BROKER_USERS["c1"].encode(),
        "the sealed command": line.encode(),
        "the command": b"adjust A +60000",
        "its seal": line.split()[2].encode(),
    }
    return relay.bytes(), secrets_


def test_on_the_wire_without_tls_an_eavesdropper_reads_the_passwords_and_commands(broker, tmp_path):
    """The attack, against a broker in the clear (the relay is a real eavesdropper's view)."""
    seen, looked_for = a_sealed_command_through(broker, tmp_path, tls_ca=None)
    assert all(value in seen for value in looked_for.values())


def test_over_tls_neither_password_nor_any_command_is_on_the_wire(tls_broker, tmp_path):
    seen, looked_for = a_sealed_command_through(tls_broker, tmp_path, tls_ca=tls_broker.ca_file)
    assert len(seen) > 2000  # both connections' handshakes, records and the command went through it
    readable = [what for what, value in looked_for.items() if value in seen]
    assert readable == []
    assert b"tileclock/" not in seen and b"MQTT" not in seen  # not even the topics, or the protocol


def test_a_clock_given_another_ca_refuses_the_broker_and_its_fault_says_why(
    tls_broker, tmp_path, monkeypatch
):
    monkeypatch.setattr("tileclock.device.links.hall_grace.DOWN_GRACE_S", 0.5)  # the fault sooner than 5 s
    other = make_tls(tmp_path / "another-hall")["tileclock-ca.pem"]
    hall = replace(hall_config(tls_broker, "c1"), tls_ca=str(other))
    sim = Simulator(
        replace(Config(clock_id="c1"), hall=hall), state_dir=str(tmp_path / "c1"), refresh_on_ticks=False
    )
    try:

        def faults():
            sim.daemon.pump(sim.time())
            return [r for r in sim.journal.records() if r["ev"] == "fault" and r["part"] == "hall"]

        wait_for(faults, what="the hall fault, after its grace")
        (fault,) = faults()
        assert "TLS: its certificate is not the hall's (tls_ca)" in fault["detail"], fault
        assert "NO HALL" in sim.daemon.alerts
        assert not sim.uplink._connected
    finally:
        sim.close()
    log = (tls_broker.folder / "mosquitto.log").read_text()
    assert " as c1 " not in log  # it never signed in: its password never left it


def test_the_spectators_bridge_reaches_a_tls_only_hall_broker(tls_broker, tmp_path):
    from tileclock.director.hall.viewers_broker import ViewersBroker

    viewers = ViewersBroker(
        tmp_path / "viewers", tls_broker.port, BROKER_USERS["viewers"], hall_ca=tls_broker.ca_file
    ).start()
    clock = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="c1")
    clock.username_pw_set("c1", BROKER_USERS["c1"])
    clock.tls_set(ca_certs=tls_broker.ca_file)
    clock.connect("127.0.0.1", tls_broker.port)
    clock.loop_start()
    spectator = Spectator(viewers, "watcher")
    try:
        wait_for(lambda: b"1" in spectator.bridged(), what="the bridge up, over TLS")
        clock.publish("tileclock/c1/public", b'{"v":2}', qos=1, retain=True).wait_for_publish(5)
        wait_for(lambda: "c1" in spectator.public(), what="the public state through the bridge")
    finally:
        spectator.close()
        clock.loop_stop()
        viewers.stop()
    assert "bridge_cafile" in viewers.config.read_text()


def test_the_page_and_doctor_say_so_where_tls_is_off(tmp_path):
    from tileclock.device.config_schema import HallConfig
    from tileclock.device.doctor import FAIL, OK, WARN
    from tileclock.device.doctor.host import check_hall_tls

    plain = HallFeed("127.0.0.1", 1, None, str(tmp_path / "plain"))
    ca = make_tls(tmp_path / "tls")["tileclock-ca.pem"]
    encrypted = HallFeed("127.0.0.1", 1, None, str(tmp_path / "tls-out"), tls_ca=str(ca))
    assert "NOT ENCRYPTED" in plain.snapshot()["in_the_clear"]
    assert encrypted.snapshot()["in_the_clear"] is None
    for feed in (plain, encrypted):
        feed.store.close()
    assert check_hall_tls(Config()) is None  # no [hall]: no network, nothing to say
    off = check_hall_tls(Config(hall=HallConfig(broker="10.0.0.1")))
    assert off.status == WARN and "in the clear" in off.seen and "hall_ca" in off.fix
    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("hello")
    assert check_hall_tls(Config(hall=HallConfig(broker="h", tls_ca=str(bad)))).status == FAIL
    assert check_hall_tls(Config(hall=HallConfig(broker="h", tls_ca=str(ca)))).status == OK


def hall_setup(folder, *options):
    assert main(["hall-setup", str(folder), "--clock", "c1", *options]) == 0


def test_hall_setup_writes_a_ca_a_certificate_for_the_laptop_and_a_tls_only_config(tmp_path, capsys):
    folder = tmp_path / "setup"
    hall_setup(folder, "--address", "192.168.4.1", "--name", "hall.lan")
    said = capsys.readouterr().out
    assert "TLS on 8883 only" in said and "tileclock-ca.pem" in said
    for name in ("tileclock-ca.key", "tileclock-broker.key"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    for name in ("tileclock-ca.pem", "tileclock-broker.pem"):
        assert (folder / name).read_text().startswith("-----BEGIN CERTIFICATE-----")
    names = subprocess.run(
        ["openssl", "x509", "-in", str(folder / "tileclock-broker.pem"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in (
        "DNS:hall.lan",
        "IP Address:192.168.4.1",
        f"DNS:{socket.gethostname()}",
        "IP Address:127.0.0.1",
    ):
        assert name in names
    subprocess.run(
        [
            "openssl",
            "verify",
            "-CAfile",
            str(folder / "tileclock-ca.pem"),
            str(folder / "tileclock-broker.pem"),
        ],
        check=True,
        capture_output=True,
    )
    conf = (folder / "tileclock.conf").read_text()
    listeners = re.findall(r"(?m)^listener .*", conf)
    assert listeners == ["listener 8883"]  # no plain listener
    assert "certfile /etc/mosquitto/certs/tileclock-broker.pem" in conf
    assert "keyfile /etc/mosquitto/certs/tileclock-broker.key" in conf
    viewers = (folder / "tileclock-viewers.conf").read_text()
    assert (
        "address 127.0.0.1:8883" in viewers
        and "bridge_cafile /etc/mosquitto/certs/tileclock-ca.pem" in viewers
    )

    hall_setup(tmp_path / "plain", "--plain")
    plain = (tmp_path / "plain" / "tileclock.conf").read_text()
    assert re.findall(r"(?m)^listener .*", plain) == ["listener 8883", "listener 1883"]
    assert "IN THE CLEAR" in plain and "IN THE CLEAR" in capsys.readouterr().out


def test_mosquitto_runs_hall_setups_config_and_takes_the_director_over_tls_only(tmp_path):
    if mosquitto_binary() is None:
        pytest.skip(f"mosquitto is not installed: {INSTALL_HINT}")
    folder = tmp_path / "setup"
    hall_setup(folder)
    port = free_port()
    conf = (folder / "tileclock.conf").read_text()
    conf = conf.replace("listener 8883", f"listener {port} 127.0.0.1")
    conf = conf.replace("/etc/mosquitto/certs/", f"{folder}/").replace("/etc/mosquitto/", f"{folder}/")
    conf += f"persistence_location {folder}/\nlog_dest file {folder}/mosquitto.log\n"
    conf += "user root\n" if os.geteuid() == 0 else ""
    (folder / "run.conf").write_text(conf)
    # the password hall-setup printed is not kept: a fresh one for the test, hashed the same way
    from tileclock.director.hall.broker import write_passwords

    password = "director-" + secrets.token_hex(4)
    write_passwords(folder / "tileclock.passwd", {"director": password})
    broker = subprocess.Popen([mosquitto_binary(), "-c", str(folder / "run.conf")], start_new_session=True)
    try:
        wait_for(lambda: _listening(port), timeout_s=10, what="mosquitto on hall-setup's config")
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="director")
        client.username_pw_set("director", password)
        client.tls_set(ca_certs=str(folder / "tileclock-ca.pem"))
        client.connect("127.0.0.1", port)
        client.loop_start()
        wait_for(client.is_connected, what="the director over TLS")
        client.disconnect()
        client.loop_stop()
        # MQTT's CONNECT in the clear on that port: no CONNACK (0x20) comes back, only TLS's alert
        # or the connection closed
        name, user, secret = b"director", b"director", password.encode()
        body = b"\x00\x04MQTT\x04\xc2\x00\x3c" + b"".join(
            len(part).to_bytes(2, "big") + part for part in (name, user, secret)
        )
        with socket.create_connection(("127.0.0.1", port), timeout=5) as plain:
            plain.sendall(bytes([0x10, len(body)]) + body)
            try:
                answer = plain.recv(64)
            except ConnectionResetError:
                answer = b""
        assert not answer.startswith(b"\x20"), answer
    finally:
        broker.terminate()
        broker.wait(10)


def _listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def test_a_cards_hall_ca_becomes_its_tls_ca_and_a_file_that_is_no_ca_is_refused(tmp_path):
    import tomllib

    from tileclock.device.config import parse_config
    from tileclock.device.image.settings import SettingsError, apply_settings

    template = (Path(__file__).parent.parent / "systemd" / "config.toml").read_text()
    boot, etc = tmp_path / "boot", tmp_path / "etc"
    boot.mkdir()
    etc.mkdir()
    ca = make_tls(tmp_path / "tls")["tileclock-ca.pem"]
    (boot / "tileclock-ca.pem").write_bytes(ca.read_bytes())
    card = boot / "tileclock-settings.txt"
    card.write_text("hall = 192.168.4.1\nhall_password = s3cret\nhall_ca = tileclock-ca.pem\n")
    said = apply_settings(str(card), str(etc), str(tmp_path / "w"), str(tmp_path / "k"), template)
    assert "TLS" in said and "NO TLS" not in said
    config = parse_config(tomllib.loads((etc / "config.toml").read_text()))
    assert config.hall.tls_ca == str(etc / "hall-ca.pem") and config.hall.port == 8883
    assert (etc / "hall-ca.pem").read_bytes() == ca.read_bytes()
    ssl.create_default_context(cafile=config.hall.tls_ca)  # a CA the uplink can load

    for bad in (b"not a certificate\n", None):
        if bad is None:
            (boot / "tileclock-ca.pem").unlink()
        else:
            (boot / "tileclock-ca.pem").write_bytes(bad)
        card.write_text("hall = 192.168.4.1\nhall_ca = tileclock-ca.pem\n")
        with pytest.raises(SettingsError, match="hall_ca = tileclock-ca.pem"):
            apply_settings(str(card), str(etc), str(tmp_path / "w"), str(tmp_path / "k"), template)
    card.write_text("hall = 192.168.4.1\nhall_ca = ../etc/passwd\n")
    with pytest.raises(SettingsError, match="line 2: hall_ca"):
        apply_settings(str(card), str(etc), str(tmp_path / "w"), str(tmp_path / "k"), template)


def test_tileclock_hall_names_a_wrong_ca_or_a_port_without_tls_before_it_starts(tls_broker, broker, tmp_path):
    from tileclock.cli.errors import UsageError
    from tileclock.cli.hall_checks import reach

    reach("127.0.0.1", tls_broker.port, tls_broker.ca_file)  # the right CA: through
    other = str(make_tls(tmp_path / "another-hall")["tileclock-ca.pem"])
    with pytest.raises(
        UsageError, match=f"--tls-ca {other}: the broker at 127.0.0.1:{tls_broker.port} has a"
    ):
        reach("127.0.0.1", tls_broker.port, other)
    with pytest.raises(UsageError, match=f"--port {broker.port}: no TLS there"):
        reach("127.0.0.1", broker.port, tls_broker.ca_file)  # the plain broker
    with pytest.raises(UsageError, match="not a CA certificate"):
        reach("127.0.0.1", tls_broker.port, __file__)


def test_tileclock_hall_without_tls_ca_and_nothing_on_the_plain_port_says_give_tls_ca(tmp_path, monkeypatch):
    # hall-setup's broker has no plain port: before, `tileclock hall --broker HOST` (no --tls-ca,
    # so 1883) was told only "nothing answers there", which a director may meet with `--plain`
    import tileclock.cli.hall as hall_command

    closed = free_port()
    monkeypatch.setattr(hall_command, "PLAIN_PORT", closed)  # the test cannot be sure of 1883
    password = tmp_path / "director"
    password.write_text("secret\n")
    code, _, err = run(["hall", "--broker", "127.0.0.1", "--password-file", str(password)])
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(
        f"tileclock: --broker 127.0.0.1 --port {closed} (the default without --tls-ca): nothing answers "
        "there; hall-setup's broker listens with TLS only, on 8883: give --tls-ca DIR/tileclock-ca.pem"
    ), err
    # a port given: as before, no guess about TLS
    code, _, err = run(
        ["hall", "--broker", "127.0.0.1", "--port", str(closed), "--password-file", str(password)]
    )
    assert f"--port {closed}: nothing answers there (is mosquitto running" in err


def test_a_clock_in_the_clear_beside_tls_ones_is_named_on_the_page(broker, tmp_path):
    """`hall-setup --plain`: a clock without tls_ca on the plain port is marked on its board and
    named in the page's header; the director and a clock with the CA are not."""
    from support.halls import director

    plain = replace(hall_config(broker, "c1"), port=broker.port, tls_ca=None)
    clocks = [
        Simulator(replace(Config(clock_id="c1", board="7"), hall=plain), state_dir=str(tmp_path / "c1")),
        Simulator(
            replace(Config(clock_id="c2", board="8"), hall=hall_config(broker, "c2")),
            state_dir=str(tmp_path / "c2"),
        ),
    ]
    feed = director(broker, tmp_path / "out")
    try:

        def boards():
            for sim in clocks:
                sim.daemon.pump(sim.time())
            feed.step(0.05)
            return {board["clock"]: board for board in feed.snapshot()["boards"]}

        wait_for(lambda: {"c1", "c2"} <= set(boards()), what="both boards")
        shown = boards()
        assert shown["c1"]["in_the_clear"] and not shown["c2"]["in_the_clear"]
        said = feed.snapshot()["in_the_clear"]
        assert said == "NOT ENCRYPTED: board 7 reaches the broker without TLS (no tls_ca)"
    finally:
        feed.close()
        for sim in clocks:
            sim.close()


def test_a_private_brokers_keys_are_never_written_into_a_file_already_there(tmp_path):
    """local_tls writes its cached keys into every folder after the first: a key file already
    there, 0644 (or a link another user made), is replaced, never written through, and the key
    is its owner's alone."""
    local_tls(tmp_path / "first")  # the process's keys made (or already cached)
    folder = tmp_path / "second"
    folder.mkdir()
    for name in (CA_KEY, BROKER_KEY):
        (folder / name).write_text("old")
        os.chmod(folder / name, 0o644)
    paths = local_tls(folder)
    for name in (CA_KEY, BROKER_KEY):
        assert stat.S_IMODE(os.stat(paths[name]).st_mode) == 0o600
        assert b"PRIVATE KEY" in paths[name].read_bytes()


def test_tileclock_hall_given_hall_setups_keys_speaks_tls_with_the_ca_beside_them(tmp_path, monkeypatch):
    # hall-setup writes tileclock.keys and tileclock-ca.pem into one folder, and its broker has no
    # plain port: given the keys, the hall takes the CA beside them (8883) without --tls-ca
    import tileclock.cli.hall as hall_command
    from tileclock.cli.errors import UsageError

    folder = tmp_path / "hall"
    assert main(["hall-setup", str(folder), "--clock", "c1", "--address", "127.0.0.1"]) == 0
    password = tmp_path / "director"
    password.write_text("secret\n")
    reached = []

    def refuse(host, port, tls_ca=None, guessed_plain=False):
        reached.append((port, tls_ca, guessed_plain))
        raise UsageError("stop here")

    monkeypatch.setattr(hall_command, "reach", refuse)
    keys = str(folder / "tileclock.keys")
    given = ["hall", "--broker", "127.0.0.1", "--password-file", str(password), "--keys", keys]
    assert run(given)[0] == 2
    assert reached[-1] == (8883, str(folder / "tileclock-ca.pem"), False)
    assert run([*given, "--port", "1883"])[0] == 2  # a port given: the director's choice, no guess
    assert reached[-1] == (1883, None, False)
    (folder / "tileclock-ca.pem").unlink()  # keys from elsewhere, no CA beside them: as before
    assert run(given)[0] == 2
    assert reached[-1] == (1883, None, True)
