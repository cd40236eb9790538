"""`tileclock hall-setup --boards 1-30 --cards DIR`: one settings file per board, written with the
clock's id, password, command key, the hall's CA and time server, so a card joins the hall at its
first boot (issue 42, points 2 and 3); the card's own parser takes every line, and the hall's
broker takes the credentials."""

import os
import stat
import subprocess
import tomllib
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from support.hall_helpers import wait_for
from tileclock.cli import main
from tileclock.device.config import parse_config
from tileclock.device.image.settings import SETTINGS_NAME, apply_settings
from tileclock.device.image.settings_lines import parse_settings
from tileclock.director.hall.broker import INSTALL_HINT, free_port, mosquitto_binary
from tileclock.director.hall.setup import read_keys_file

TEMPLATE = (Path(__file__).parent.parent / "systemd" / "config.toml").read_text()
BASE = b'\xef\xbb\xbf# every card\r\nwifi_name = "Hall #2"\r\nwifi_password = "pass word 123"\r\nrules = nsa1997\r\n'


def hall_setup(tmp_path, *options):
    return main(["hall-setup", str(tmp_path / "hall"), "--address", "192.168.4.1", *options])


def test_hall_setup_writes_a_card_per_board_that_the_cards_parser_takes_line_by_line(tmp_path, capsys):
    (tmp_path / "base.txt").write_bytes(BASE)
    cards = tmp_path / "cards"
    assert (
        hall_setup(
            tmp_path, "--boards", "1-3,7", "--cards", str(cards), "--card-base", str(tmp_path / "base.txt")
        )
        == 0
    )
    said = capsys.readouterr().out
    assert "board-1 to board-7 (4 clocks)" in said and "boot it once" in said
    hall = tmp_path / "hall"
    keys = read_keys_file(hall / "tileclock.keys")
    assert sorted(keys) == ["board-1", "board-2", "board-3", "board-7"]
    assert not any(key in said for key in keys.values())  # a director never types (or sees) a key
    assert sorted(os.listdir(cards)) == ["board-1", "board-2", "board-3", "board-7"]
    ca = (hall / "tileclock-ca.pem").read_bytes()
    for board in (1, 2, 3, 7):
        card = cards / f"board-{board}" / SETTINGS_NAME
        assert stat.S_IMODE(card.stat().st_mode) == 0o600
        settings = parse_settings(card.read_bytes())  # the card's own parser: every line taken
        assert (settings.board, settings.clock_id) == (str(board), f"board-{board}")
        assert (settings.hall, settings.time_server) == ("192.168.4.1", "192.168.4.1")
        assert settings.hall_key == keys[f"board-{board}"] and settings.hall_ca_cert == ca
        assert (settings.wifi_name, settings.rules) == ("Hall #2", "nsa1997")  # the base's lines
        assert settings.hall_password and settings.hall_password in card.read_text()
    acl = (hall / "tileclock.acl").read_text()
    assert "user board-7" in acl


def test_a_card_hall_setup_wrote_becomes_a_clock_of_that_hall_at_its_first_boot(tmp_path):
    cards = tmp_path / "cards"
    assert hall_setup(tmp_path, "--boards", "12", "--cards", str(cards)) == 0
    boot, etc, data = tmp_path / "boot", tmp_path / "etc", tmp_path / "data"
    for folder in (boot, etc, data):
        folder.mkdir()
    (boot / SETTINGS_NAME).write_bytes((cards / "board-12" / SETTINGS_NAME).read_bytes())
    said = apply_settings(str(boot / SETTINGS_NAME), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    assert "clock id board-12" in said and "TLS" in said and "sealed commands" in said
    assert not (boot / SETTINGS_NAME).exists()
    config = parse_config(tomllib.loads((etc / "config.toml").read_text()))
    keys = read_keys_file(tmp_path / "hall" / "tileclock.keys")
    assert (config.clock_id, config.board, config.hall.broker) == ("board-12", "12", "192.168.4.1")
    assert config.hall.key == keys["board-12"] and config.hall.port == 8883
    assert Path(config.hall.tls_ca).read_bytes() == (tmp_path / "hall" / "tileclock-ca.pem").read_bytes()
    assert "server 192.168.4.1 iburst" in (etc / "chrony.conf").read_text()


@pytest.mark.parametrize(
    "options, words",
    [
        (["--boards", "1-30"], "the three together"),
        (["--cards", "CARDS"], "the three together"),
        (["--boards", "30-1", "--cards", "CARDS"], "low to high"),
        (["--boards", "0-3", "--cards", "CARDS"], "from 1 up"),
        (["--boards", "1-2,2", "--cards", "CARDS"], "named twice"),
        (["--boards", "one", "--cards", "CARDS"], "like 1-30"),
        (["--boards", "1-100000", "--cards", "CARDS"], "at most 500"),
        (["--boards", "1", "--cards", "CARDS", "--clock", "board-1"], "--clock board-1"),
        (["--boards", "1", "--cards", "CARDS", "--card-base", "BASE"], "sets hall"),
        (["--boards", "1", "--cards", "CARDS", "--card-base", "TIME"], "sets time_server"),
        (["--boards", "1", "--cards", "CARDS", "--card-base", "BAD"], "line 1: rules"),
        (["--boards", "1", "--cards", "CARDS", "--card-base", "NONE"], "No such file"),
    ],
)
def test_a_wrong_cards_option_is_refused_in_words_before_anything_is_written(
    tmp_path, capsys, options, words
):
    (tmp_path / "BASE").write_text("wifi_country = GB\nhall = 10.0.0.1\n")
    (tmp_path / "BAD").write_text("rules = chess\n")
    # before, a time_server here was taken, then written twice on every card: refused only after
    # the hall's folder (every password and key) had been made again
    (tmp_path / "TIME").write_text("time_server = 192.168.4.9\n")
    options = [
        str(tmp_path / option) if option in ("CARDS", "BASE", "BAD", "NONE", "TIME") else option
        for option in options
    ]
    argv = ["hall-setup", str(tmp_path / "hall"), *options]
    if "the three together" not in words:
        argv += ["--address", "192.168.4.1"]
    assert main(argv) != 0
    assert words in capsys.readouterr().err
    assert not (tmp_path / "hall").exists() and not (tmp_path / "CARDS").exists()


def test_the_halls_broker_takes_a_cards_password_over_tls_with_the_cards_ca(tmp_path):
    if mosquitto_binary() is None:
        pytest.skip(f"mosquitto is not installed: {INSTALL_HINT}")
    cards = tmp_path / "cards"
    assert hall_setup(tmp_path, "--boards", "1-2", "--cards", str(cards)) == 0
    folder = tmp_path / "hall"
    port = free_port()
    conf = (folder / "tileclock.conf").read_text()
    conf = conf.replace("listener 8883", f"listener {port} 127.0.0.1")
    conf = conf.replace("/etc/mosquitto/certs/", f"{folder}/").replace("/etc/mosquitto/", f"{folder}/")
    conf += f"persistence_location {folder}/\nlog_dest file {folder}/mosquitto.log\n"
    conf += "user root\n" if os.geteuid() == 0 else ""
    (folder / "run.conf").write_text(conf)
    card = parse_settings((cards / "board-2" / SETTINGS_NAME).read_bytes())
    (tmp_path / "card-ca.pem").write_bytes(card.hall_ca_cert)  # as the card keeps it
    broker = subprocess.Popen([mosquitto_binary(), "-c", str(folder / "run.conf")], start_new_session=True)
    try:

        def login(user, password):
            answers = []
            client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=user)
            client.username_pw_set(user, password)
            client.tls_set(ca_certs=str(tmp_path / "card-ca.pem"))
            client.on_connect = lambda c, u, flags, reason, p: answers.append(reason.is_failure)
            client.connect("127.0.0.1", port)
            client.loop_start()
            wait_for(lambda: answers, timeout_s=10, what=f"the broker's answer to {user}")
            client.disconnect()
            client.loop_stop()
            return not answers[0]

        wait_for(lambda: _listening(port), timeout_s=10, what="mosquitto on hall-setup's config")
        assert login("board-2", card.hall_password)
        assert not login("board-1", card.hall_password)  # one card's password is its own
    finally:
        broker.terminate()
        broker.wait(10)


def _listening(port):
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def test_the_cards_chrony_lines_are_hall_setups_chrony_clock_conf(tmp_path):
    # the image writes them at first boot (no install.sh on a card): the same source and step
    from tileclock.device.image.settings import chrony_conf
    from tileclock.device.image.settings_lines import Settings
    from tileclock.director.hall.timeserver import clock_conf

    def lines(text):
        return [line for line in text.splitlines() if line and not line.startswith("#")]

    assert lines(chrony_conf(Settings(hall="h", time_server="192.168.4.1"))) == lines(
        clock_conf("192.168.4.1")
    )
    include = (Path(__file__).parent.parent / "hw/image/root/etc/chrony/conf.d/tileclock.conf").read_text()
    # a pattern (none there is no error), after the stand-alone card's makestep: chrony keeps the
    # last one it reads, so the hall's "makestep 0.1 -1" in the included file wins
    assert lines(include) == ["makestep 1 3", "include /etc/tileclock/chrony*.conf"]
    finish = (Path(__file__).parent.parent / "hw/image/finish.sh").read_text()
    assert "s|^makestep .*|#" in finish  # Debian's own, read after conf.d, taken out of chrony.conf
    packages = (Path(__file__).parent.parent / "hw/image/packages.txt").read_text()
    listed = {word for line in packages.splitlines() for word in line.split("#")[0].split()[1:]}
    assert "chrony" in listed and "systemd-timesyncd" not in listed


def test_the_directors_card_file_name_is_the_cards():
    from tileclock.director.hall.setup import CARD_FILE

    assert CARD_FILE == SETTINGS_NAME
