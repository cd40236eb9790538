"""The image's settings file: what a director writes on the card, read once, kept, and wiped."""

import os
import stat
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from tileclock.device.config import parse_config
from tileclock.device.image.boot import main
from tileclock.device.image.settings import (
    REJECTED_NAME,
    SETTINGS_NAME,
    SettingsError,
    apply_settings,
    config_toml,
    rejection_reason,
    wpa_conf,
)
from tileclock.device.image.settings_lines import Settings, parse_settings
from tileclock.device.image.verdict import draw, refused_verdict, short_verdict, show, silent_panels

TEMPLATE = (Path(__file__).parent.parent / "systemd" / "config.toml").read_text()
EXAMPLE = Path(__file__).parent.parent / "hw" / "image" / "root" / "usr" / "lib" / "tileclock-image"

HALL_CARD = b"""# written on a laptop
board = 12
rules = nsa1997
panels = sh1106
wifi_name = "Hall #2"
wifi_password = "pass word 123"
wifi_country = GB
hall = 192.168.4.1
hall_password = "s3cret #q"
"""


def folders(tmp_path):
    boot, etc, data = tmp_path / "boot", tmp_path / "etc", tmp_path / "data"
    for folder in (boot, etc, data):
        folder.mkdir()
    return boot, etc, data


def test_a_hall_card_becomes_a_config_the_clock_accepts_and_the_file_leaves_the_fat(tmp_path):
    boot, etc, data = folders(tmp_path)
    card = boot / SETTINGS_NAME
    card.write_bytes(HALL_CARD)
    said = apply_settings(str(card), str(etc), str(data / "wifi.conf"), str(data / "keys"), TEMPLATE)
    assert "board 12" in said and "hall 192.168.4.1" in said and "s3cret" not in said
    assert not card.exists()
    config = parse_config(tomllib.loads((etc / "config.toml").read_text()))
    assert (config.board, config.rules, config.hall.broker) == ("12", "nsa1997", "192.168.4.1")
    assert config.hall.password == "s3cret #q"  # in quotes, '#' is part of the value
    assert {panel.driver for panel in config.panels} == {"sh1106"}
    for name in ("config.toml", "settings.txt"):  # the passwords: not for every user to read
        assert stat.S_IMODE(os.stat(etc / name).st_mode) == 0o640
    assert (etc / "settings.txt").read_bytes() == HALL_CARD
    wifi = (data / "wifi.conf").read_text()
    assert stat.S_IMODE(os.stat(data / "wifi.conf").st_mode) == 0o600
    assert f"ssid={b'Hall #2'.hex()}" in wifi and "country=GB" in wifi and "pass word" not in wifi
    assert not (data / "keys").exists()


def test_the_wifi_psk_is_the_one_wpa_passphrase_makes():
    # IEEE 802.11i's PBKDF2 test vector: passphrase "password", SSID "IEEE", 4096 rounds of SHA-1
    conf = wpa_conf(Settings(wifi_name="IEEE", wifi_password="password"))
    assert "psk=f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e\n" in conf
    assert "ssid=49454545\n" in conf


def test_a_wrong_file_is_refused_by_line_and_left_for_the_director_with_the_old_settings(tmp_path):
    boot, etc, data = folders(tmp_path)
    (etc / "config.toml").write_text(TEMPLATE)
    card = boot / SETTINGS_NAME
    for text, words in [
        (b"board = 12\nwfi_name = x\n", "line 2: unknown key 'wfi_name'"),
        (b"wifi_name = hall\nwifi_password = short\n", "line 2: wifi_password"),
        (b"wifi_name = hall\n", "go together"),
        (b"hall_password = x\n", "need hall"),
        (b"hall = -oProxyCommand=x\n", "line 1: hall"),
        (b"board = 12\nboard = 13\n", "set twice"),
        (b"rules = chess\n", "line 1: rules"),
        (b"\xff\xfe b\x00o", "not text"),
        (b'board = "12\n', "must end with a quote"),
    ]:
        card.write_bytes(text)
        with pytest.raises(SettingsError, match=words):
            apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
        assert card.read_bytes() == text and (etc / "config.toml").read_text() == TEMPLATE
    card.write_bytes(b"wifi_name = hall\nwifi_password = secret-but-7\n"[:29] + b"x\n")
    with pytest.raises(SettingsError) as refused:
        apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    assert "secret" not in str(refused.value)  # a password is never shown, even a wrong one


def test_a_wipe_cut_short_by_a_power_cut_is_finished_and_nothing_applied(tmp_path):
    boot, etc, data = folders(tmp_path)
    (etc / "config.toml").write_text(TEMPLATE)
    card = boot / SETTINGS_NAME
    card.write_bytes(b"\0" * 300)
    said = apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    assert "power cut" in said and not card.exists() and (etc / "config.toml").read_text() == TEMPLATE


def test_an_empty_file_is_a_stand_alone_clock_and_a_new_file_replaces_every_setting(tmp_path):
    boot, etc, data = folders(tmp_path)
    card = boot / SETTINGS_NAME
    card.write_bytes(HALL_CARD + b"ssh_key = ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ8b director@laptop\n")
    apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    assert (data / "k").read_text().startswith("ssh-ed25519 ") and (data / "w").exists()
    card.write_bytes(b"# nothing set\nwifi_name =\n")
    said = apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    config = parse_config(tomllib.loads((etc / "config.toml").read_text()))
    assert "stand-alone" in said and config.hall is None and config.board == "1"
    assert not (data / "w").exists() and not (data / "k").exists()


def test_a_board_without_a_serial_keeps_the_id_of_its_first_boot(tmp_path, monkeypatch):
    boot, etc, data = folders(tmp_path)
    template = tmp_path / "template.toml"
    template.write_text(TEMPLATE)
    (etc / "config.toml").write_text(TEMPLATE)
    monkeypatch.setattr("tileclock.device.identity.board_serial", lambda *a: None)
    monkeypatch.setattr("tileclock.device.identity.hardware_clock_id", lambda *a: "0a1b2c3d4e5f")
    argv = ["--boot", str(boot), "--etc", str(etc), "--template", str(template)]
    argv += ["--wifi", str(data / "w"), "--ssh", str(data / "k"), "--group", "no-such-group"]
    assert main(argv) == 0
    assert parse_config(tomllib.loads((etc / "config.toml").read_text())).clock_id == "0a1b2c3d4e5f"
    monkeypatch.setattr("tileclock.device.identity.hardware_clock_id", lambda *a: "ffffffffffff")
    (boot / SETTINGS_NAME).write_bytes(b"board = 7\n")  # a settings change later: the id stays
    assert main(argv) == 0
    config = parse_config(tomllib.loads((etc / "config.toml").read_text()))
    assert (config.board, config.clock_id) == ("7", "0a1b2c3d4e5f")
    (boot / SETTINGS_NAME).write_bytes(b"board = 7 8\n")
    assert main(argv) == 2 and (boot / SETTINGS_NAME).exists()


def test_a_refused_file_is_named_beside_it_on_the_card_and_on_the_panels_until_it_is_mended(
    tmp_path, monkeypatch
):
    boot, etc, data = folders(tmp_path)
    monkeypatch.setattr("tileclock.device.identity.board_serial", lambda *a: "00000000c0ffee25")
    template = tmp_path / "template.toml"
    template.write_text(TEMPLATE)
    (etc / "config.toml").write_text(TEMPLATE)
    argv = ["--boot", str(boot), "--etc", str(etc), "--template", str(template)]
    argv += ["--wifi", str(data / "w"), "--ssh", str(data / "k"), "--group", "no-such-group"]
    card = boot / SETTINGS_NAME
    bad = b'board = 12\nwifi_name = Hall\nwifi_password = "tiny pw"\nrules = chess\n'
    card.write_bytes(bad)
    assert main(argv) == 2
    # nothing applied, the file kept as the director wrote it, the reason beside it
    assert (etc / "config.toml").read_text() == TEMPLATE and card.read_bytes() == bad
    assert not (data / "w").exists() and not (etc / "settings.txt").exists()
    note = (boot / REJECTED_NAME).read_text()
    assert "line 3: wifi_password" in note and "tiny pw" not in note  # never a password
    reason = rejection_reason(str(boot))
    assert reason.startswith("line 3: wifi_password")
    lines = refused_verdict(reason)
    assert lines[:2] == ["NOT READY", "settings line 3:"] and lines[2].startswith("wifi_password")
    assert all(len(line) <= 21 for line in lines) and draw(lines).getbbox() is not None
    assert refused_verdict("wifi_name and wifi_password go together")[1] == "settings refused:"
    card.write_bytes(b"board = 12\nrules = nsa1997\n")  # mended: applied, and the note goes
    shown = []
    monkeypatch.setattr("tileclock.device.image.verdict.show_verdict", lambda *args: shown.append(list(args)))
    assert main(argv + ["--verdict", "10"]) == 0
    # the verdict, in the same Python, comes after the settings: it reads the new config
    assert shown == [[str(etc / "config.toml"), "/var/lib/tileclock", str(boot), 10]]
    assert not (boot / REJECTED_NAME).exists() and rejection_reason(str(boot)) is None
    assert parse_config(tomllib.loads((etc / "config.toml").read_text())).board == "12"


def test_the_example_on_the_card_is_a_valid_stand_alone_file_naming_every_key():
    from tileclock.device.image.settings_lines import KEYS

    text = (EXAMPLE / "tileclock-settings.example.txt").read_bytes()
    assert parse_settings(text) == Settings()
    for key in KEYS:
        assert f"\n{key} =" in text.decode()


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=400) | st.text(max_size=300).map(str.encode))
def test_any_bytes_on_the_card_are_refused_in_words_or_make_a_config_the_clock_accepts(data):
    try:
        parsed = parse_settings(data)
    except SettingsError as error:
        assert str(error)
        return
    parse_config(tomllib.loads(config_toml(parsed, TEMPLATE)))


def test_the_panels_show_ready_with_the_id_and_hall_or_the_first_failure_in_a_few_words():
    from tileclock.device.doctor import FAIL, OK, WARN, Check

    good = [Check(OK, "config", "x"), Check(WARN, "service", "inactive")]
    assert short_verdict(good, "0a1b2c3d4e5f", "192.168.4.1") == [
        "READY",
        "id 0a1b2c3d4e5f",
        "hall 192.168.4.1",
    ]
    assert short_verdict(good, "0a1b2c3d4e5f", None)[2] == "no hall: serial"
    bad = good + [Check(FAIL, "panel B", "nothing answers at 0x3D on I2C bus 1")]
    lines = short_verdict(bad, "0a1b2c3d4e5f", None)
    assert lines[:2] == ["NOT READY", "panel B:"] and all(len(line) <= 21 for line in lines)
    picture = draw(lines)
    assert picture.size == (128, 64) and picture.getbbox() is not None


def test_the_verdict_is_not_sent_to_a_panel_doctor_found_silent_but_is_to_the_other():
    # An absent I2C panel costs the bus's timeout at every try: doctor has tried it once already.
    from tileclock.device.config_schema import Config
    from tileclock.device.doctor import FAIL, OK, Check

    checks = [Check(OK, "panel wiring", "x"), Check(FAIL, "panel B", "nothing answers at 0x3D")]
    checks.append(Check(FAIL, "panel SPI library", "spidev does not import"))
    assert silent_panels(checks) == {"B"}
    opened, shown = [], []

    class Panel:
        def display(self, picture):
            shown.append(picture.getbbox())

    def opener(spec):
        opened.append(spec.faces)
        return Panel()

    missing = show(Config(), ["READY", "id 0a1b2c3d4e5f", "no hall: serial"], opener, silent_panels(checks))
    assert opened == ["A"] and len(shown) == 1 and shown[0] is not None
    assert missing == ["B: doctor found it silent"]


def test_doctor_on_debians_kernel_reads_the_i2c_speed_from_the_running_tree_not_dtparam_lines(tmp_path):
    # The image's config.txt is raspi-firmware's (upstream_kernel=1, no dtparam lines: they do
    # nothing on mainline trees); Pi OS's checks would call a working card broken.
    from tileclock.device.config_schema import Config
    from tileclock.device.doctor import FAIL, OK, WARN
    from tileclock.device.doctor.pi import check_boot

    boot = tmp_path / "boot" / "firmware"
    boot.mkdir(parents=True)
    (boot / "config.txt").write_text("arm_64bit=1\nenable_uart=1\nupstream_kernel=1\nkernel=vmlinuz-6.1\n")
    (boot / "cmdline.txt").write_text("console=tty0 root=LABEL=tileroot rw overlayroot=tmpfs:recurse=0\n")
    seen = {check.what: check for check in check_boot(Config(), str(tmp_path), model="")}
    assert seen["boot config: I2C"].status == OK and "boot config: I2C speed" not in seen  # a chroot
    node = tmp_path / "proc" / "device-tree" / "soc" / "i2c@7e804000"
    node.mkdir(parents=True)
    (node / "status").write_bytes(b"okay\0")
    (node / "clock-frequency").write_bytes((400_000).to_bytes(4, "big"))
    seen = {check.what: check for check in check_boot(Config(), str(tmp_path), model="")}
    assert [seen[what].status for what in ("boot config: I2C", "boot config: I2C speed")] == [OK, OK]
    assert FAIL not in {check.status for check in seen.values()}
    (node / "clock-frequency").write_bytes((100_000).to_bytes(4, "big"))  # a tree the hook missed
    speed = {check.what: check for check in check_boot(Config(), str(tmp_path), model="")}[
        "boot config: I2C speed"
    ]
    assert speed.status == WARN and "100000 Hz" in speed.seen and "i2c-400khz" in speed.fix


def test_doctor_names_the_serial_number_as_the_ids_source_on_debians_kernel_too(tmp_path):
    from tileclock.device.config_schema import Config
    from tileclock.device.doctor.pi import clock_id
    from tileclock.device.identity import hardware_clock_id

    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text("processor\t: 0\nBogoMIPS\t: 38.40\n")  # mainline: no Serial
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "machine-id").write_text("0123456789abcdef0123456789abcdef\n")
    base = tmp_path / "sys" / "firmware" / "devicetree" / "base"
    base.mkdir(parents=True)
    (base / "serial-number").write_bytes(b"00000000c0ffee25\0")
    found, source = clock_id(Config(), str(tmp_path / "state"), str(tmp_path))
    assert source == "from this Pi's serial number"
    assert found == hardware_clock_id("/nonexistent", "/nonexistent", str(base / "serial-number"))


@pytest.mark.parametrize(
    "name",
    [
        "[tileclock-ca.pem]",  # a wrong type: a list, a table, a number
        "{name = 'tileclock-ca.pem'}",
        "1.5e3 ca",
        "c" * 65,  # huge: a name longer than any file beside this one has
        "a/b/c/tileclock-ca.pem",  # nested: a path into folders, or out of the partition
        "..",
        "tileclock-ca.pem/../../etc/shadow",
    ],
)
def test_a_hall_ca_that_is_no_file_name_is_refused_by_line(name):
    with pytest.raises(SettingsError, match="line 2: hall_ca"):
        parse_settings(f"hall = 192.168.4.1\nhall_ca = {name}\n".encode())


PEM = b"-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n"
HOSTILE_CAS = {
    # wrong types: not a certificate, not text, no file at all
    "a private key": b"-----BEGIN PRIVATE KEY-----\nMIIBVQ==\n-----END PRIVATE KEY-----\n",
    "not ASCII": b"\xff\xfe" + PEM % b"MIIB",
    "a folder": None,
    "a fifo": None,
    "a link to a CA": None,
    # huge
    "too large": PEM % (b"A" * (64 * 1024)),
    # nested: a certificate's armour inside another's
    "armour in armour": PEM % (PEM % b"MIIB"),
}


@pytest.mark.parametrize("kind", HOSTILE_CAS, ids=HOSTILE_CAS.keys())
def test_a_hall_ca_file_that_is_no_certificate_is_refused_naming_it(tmp_path, kind):
    from tileclock.device.image.settings import read_hall_ca

    path = tmp_path / "tileclock-ca.pem"
    if kind == "a folder":
        path.mkdir()
    elif kind == "a fifo":
        os.mkfifo(path)  # opened non-blocking: never waited on
    elif kind == "a link to a CA":
        (tmp_path / "elsewhere.pem").write_bytes(PEM % b"MIIB")
        path.symlink_to(tmp_path / "elsewhere.pem")
    else:
        path.write_bytes(HOSTILE_CAS[kind])
    with pytest.raises(SettingsError, match="hall_ca = tileclock-ca.pem: ") as caught:
        read_hall_ca(str(tmp_path), "tileclock-ca.pem")
    assert len(str(caught.value)) < 200 and "MIIB" not in str(caught.value)


@pytest.fixture(scope="module")
def hall_ca(tmp_path_factory):
    """A hall's CA as hall-setup makes it (tls.py, openssl): its PEM bytes."""
    from tileclock.director.hall.tls import CA_CERT, make_tls

    folder = tmp_path_factory.mktemp("hall")
    make_tls(folder, addresses=["192.168.4.1"])
    return (folder / CA_CERT).read_bytes()


KEY_HEX = "0123456789abcdef" * 4


def full_card(ca, crlf=False, bom=False):
    import base64

    text = (
        HALL_CARD.decode()
        + f"clock_id = board-12\nhall_key = {KEY_HEX}\nhall_ca_cert = {base64.b64encode(ca).decode()}\n"
        + "time_server = 192.168.4.1\ntime_a = 25:00\ntime_b = 30:00\nround_limit = 58:00\n"
        + "rotate_a = 2\nrotate_b = 0\nwiring = i2c-one-bus\n"
    )
    if crlf:
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


@pytest.mark.parametrize("crlf, bom", [(False, False), (True, True)], ids=["plain", "crlf-and-bom"])
def test_one_settings_file_carries_the_key_the_ca_the_time_server_the_times_and_the_panels(
    tmp_path, hall_ca, crlf, bom
):
    boot, etc, data = folders(tmp_path)
    card = boot / SETTINGS_NAME
    card.write_bytes(full_card(hall_ca, crlf, bom))
    said = apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE, "0a1b2c3d4e5f")
    assert "clock id board-12" in said and "sealed commands" in said and "time from 192.168.4.1" in said
    assert KEY_HEX not in said and "s3cret" not in said
    assert not card.exists()  # key, password and all: gone from the FAT partition
    config = parse_config(tomllib.loads((etc / "config.toml").read_text()))
    assert config.clock_id == "board-12"  # the settings file's, not the serial's
    assert (config.hall.key, config.hall.tls_ca, config.hall.port) == (
        KEY_HEX,
        str(etc / "hall-ca.pem"),
        8883,
    )
    assert config.times_s == {"A": 1500, "B": 1800} and config.profile.round_limit_s == 58 * 60
    assert {panel.faces: panel.rotate for panel in config.panels} == {"A": 2, "B": 0}
    assert config.wiring == "i2c-one-bus" and {(p.port, p.address) for p in config.panels} == {
        (1, 0x3C),
        (1, 0x3D),
    }
    assert (etc / "hall-ca.pem").read_bytes() == hall_ca
    modes = {name: stat.S_IMODE(os.stat(etc / name).st_mode) for name in os.listdir(etc)}
    assert modes == {"config.toml": 0o640, "settings.txt": 0o640, "hall-ca.pem": 0o644, "chrony.conf": 0o644}
    chrony = (etc / "chrony.conf").read_text()
    assert "\nserver 192.168.4.1 iburst minpoll 4 maxpoll 6 prefer\n" in chrony and "makestep" in chrony


def test_the_time_follows_the_hall_unless_a_time_server_is_named_and_none_without_a_hall(tmp_path):
    boot, etc, data = folders(tmp_path)
    card = boot / SETTINGS_NAME
    card.write_bytes(HALL_CARD)
    assert "time from 192.168.4.1" in apply_settings(
        str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE
    )
    assert "server 192.168.4.1 iburst" in (etc / "chrony.conf").read_text()
    card.write_bytes(HALL_CARD + b"time_server = ntp.hall.lan\n")
    apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    assert "server ntp.hall.lan iburst" in (etc / "chrony.conf").read_text()
    card.write_bytes(b"board = 3\n")  # stand-alone: no time server, the old one's lines go
    assert "no time server" in apply_settings(str(card), str(etc), str(data / "w"), str(data / "k"), TEMPLATE)
    assert not (etc / "chrony.conf").exists()


BAD_NEW_LINES = [
    # (line, what the refusal says: the line, the key and, but for a secret, the value)
    ("clock_id = director", "line 2: clock_id = 'director'"),
    ("clock_id = a/b", "line 2: clock_id = 'a/b'"),
    ("clock_id = " + "c" * 40, "line 2: clock_id = 'c"),
    ("time_server = -oProxy", "line 2: time_server = '-oProxy'"),
    ("time_a = 25", "line 2: time_a = '25': a starting time is m:ss"),
    ("time_b = 0:00", "line 2: time_b = '0:00'"),
    ("time_b = 99999:00", "line 2: time_b = '99999:00'"),
    ("round_limit = never", "line 2: round_limit = 'never'"),
    ("rotate_a = 1", "line 2: rotate_a = '1'"),
    ("rotate_b = 180", "line 2: rotate_b = '180'"),
    ("wiring = i2c", "line 2: wiring = 'i2c': one of"),
    # wirings the image cannot drive (no second I2C bus, no spidev): said, not dark panels
    ("wiring = i2c-two-buses", "line 2: wiring = 'i2c-two-buses': this image drives i2c-one-bus only"),
    ("wiring = spi", "line 2: wiring = 'spi': this image drives i2c-one-bus only"),
    ("hall_ca_cert = not base64!", "line 2: hall_ca_cert = 'not base64!'"),
    ("hall_ca_cert = QUJD", "line 2: hall_ca_cert = 'QUJD': not a PEM certificate"),
    ("hall_ca_cert = QUJ", "line 2: hall_ca_cert = 'QUJ': not base64"),
]


@pytest.mark.parametrize("line, words", BAD_NEW_LINES, ids=[line for line, _ in BAD_NEW_LINES])
def test_a_bad_new_line_is_refused_naming_the_line_the_key_and_the_value(line, words):
    with pytest.raises(SettingsError) as refused:
        parse_settings(f"hall = 192.168.4.1\n{line}\n".encode())
    assert str(refused.value).startswith(words), str(refused.value)
    assert len(str(refused.value)) < 300


def test_a_bad_command_key_is_refused_by_line_and_never_shown():
    for key in ("0123" * 15, KEY_HEX.upper(), KEY_HEX + "0", "g" * 64):
        with pytest.raises(SettingsError, match="line 2: hall_key: ") as refused:
            parse_settings(f"hall = 192.168.4.1\nhall_key = {key}\n".encode())
        assert key not in str(refused.value) and key[:16] not in str(refused.value)


def test_hostile_new_lines_huge_binary_twice_or_without_a_hall_are_refused_in_words(hall_ca):
    import base64

    huge = base64.b64encode(hall_ca * 20).decode()  # 30 kB: over the file's limit
    for data, words in [
        (f"hall = h\nhall_ca_cert = {huge}\n".encode(), "bytes: a settings file is under"),
        (b"hall = h\nhall_ca_cert = " + b"A" * 12000 + b"\n", "line 2: hall_ca_cert"),
        (b"hall = h\nclock_id = b\xff\xfe\n", "not text"),
        (b"hall = h\nclock_id = b\x00d\n", "line 2: clock_id"),
        (b"hall = h\ntime_a = 25:00\ntime_a = 26:00\n", "line 3: time_a is set twice"),
        (
            b"hall = h\nhall_key = " + KEY_HEX.encode() + b"\r\nhall_key = " + KEY_HEX.encode() + b"\r\n",
            "set twice",
        ),
        (f"hall_key = {KEY_HEX}\n".encode(), "need hall"),
        (b"hall_ca_cert = " + base64.b64encode(hall_ca) + b"\n", "need hall"),
        (
            b"hall = h\nhall_ca = tileclock-ca.pem\nhall_ca_cert = " + base64.b64encode(hall_ca) + b"\n",
            "keep one",
        ),
    ]:
        with pytest.raises(SettingsError, match=words) as refused:
            parse_settings(data)
        assert KEY_HEX not in str(refused.value) and len(str(refused.value)) < 400
