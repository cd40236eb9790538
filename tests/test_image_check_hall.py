"""hw/image/check_hall.py, the hall `make image-check` boots a card against (issue 42, point 6):
the card it prepares is hall-setup's own, which the card's parser takes, and its time server
answers a client's NTP request as a server must (chrony drops an answer that is not)."""

import importlib.util
import struct
from pathlib import Path

from tileclock.device.image.settings_lines import parse_settings
from tileclock.director.hall.setup import read_keys_file

HERE = Path(__file__).parent.parent / "hw" / "image" / "check_hall.py"


def load():
    spec = importlib.util.spec_from_file_location("check_hall", HERE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checks_card_is_hall_setups_for_board_7_with_the_brokers_port(tmp_path):
    check = load()
    check.prepare(tmp_path)
    settings = parse_settings((tmp_path / "settings.txt").read_bytes())
    port = int((tmp_path / "port").read_text())
    keys = read_keys_file(tmp_path / "hall" / "tileclock.keys")
    assert (settings.board, settings.clock_id, settings.hall, settings.time_server) == (
        "7",
        "board-7",
        "10.0.2.2",
        "10.0.2.2",
    )
    assert settings.hall_key == keys["board-7"] and settings.hall_port == port
    assert settings.hall_ca_cert == (tmp_path / "hall" / "tileclock-ca.pem").read_bytes()
    conf = (tmp_path / "broker.conf").read_text()
    assert f"listener {port} 127.0.0.1\n" in conf and "listener 8883" not in conf
    assert "certfile" in conf  # hall-setup's TLS listener, moved, still TLS


def test_the_time_server_answers_a_clients_request_with_its_origin_and_the_time():
    check = load()
    request = bytes([(0 << 6) | (4 << 3) | 3]) + bytes(39) + b"\x12\x34\x56\x78\x9a\xbc\xde\xf0"
    answer = check.ntp_answer(request, 1_796_000_000.5, now=lambda: 1_796_000_000.75)
    assert len(answer) == 48
    assert answer[0] == (4 << 3) | 4 and answer[1] == 1  # version 4, a server; stratum 1
    assert answer[24:32] == request[40:48]  # the origin: the client's transmit time
    received, sent = struct.unpack("!I", answer[32:36])[0], struct.unpack("!I", answer[40:44])[0]
    assert received == sent == 1_796_000_000 + check.NTP_EPOCH
    assert struct.unpack("!I", answer[44:48])[0] == 3 << 30  # .75 s
    assert check.ntp_answer(bytes([(4 << 3) | 4]) + bytes(47), 0) is None  # a server's own answer
    assert check.ntp_answer(b"short", 0) is None
