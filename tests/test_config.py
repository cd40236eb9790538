"""The config file: defaults, every key checked, errors that name the key and the value."""

import pytest

from tileclock.device.config import ConfigError, load_config, parse_config, with_times
from tileclock.device.config_schema import Config


def test_an_empty_config_gives_the_defaults():
    config = parse_config({})
    assert config == Config()
    assert config.profile.name == "naspa" and config.pins == {"A": 17, "STOP": 27, "B": 22}


def test_every_section_is_read():
    config = parse_config(
        {
            "clock": {"board": "12", "rules": "nsa1997", "time_a": "25:00", "time_b": "30:00"},
            "buttons": {"a": 5, "stop": 6, "b": 13, "min_turn_ms": 300, "bounce_ms": 15, "call_taps": 4},
            "serial": {"port": "/dev/ttyGS0", "baud": 9600},
            "screens": {"i2c_hz": 100_000},
        }
    )
    assert config.i2c_hz == 100_000
    assert config.board == "12" and config.rules == "nsa1997"
    assert config.times_s == {"A": 1500, "B": 1800}
    assert config.pins == {"A": 5, "STOP": 6, "B": 13}
    assert config.timing.min_turn_ms == 300 and config.timing.bounce_ms == 15
    assert config.timing.call_taps == 4 and config.timing.call_window_ms == 2000
    assert config.serial_port == "/dev/ttyGS0" and config.serial_baud == 9600


@pytest.mark.parametrize(
    "data, names",
    [
        ({"clock": {"rule": "naspa"}}, ["clock.rule", "'naspa'"]),
        ({"clock": {"rules": "wespa"}}, ["clock.rules", "'wespa'"]),
        ({"clock": {"time_a": "25:61"}}, ["clock.time_a", "'25:61'"]),
        ({"clock": {"time_b": 1500}}, ["clock.time_b", "1500"]),
        ({"buttons": {"a": "17"}}, ["buttons.a", "'17'"]),
        ({"buttons": {"b": 40}}, ["buttons.b", "40"]),
        ({"buttons": {"a": 22}}, ["share a pin"]),
        ({"buttons": {"min_turn_ms": -1}}, ["buttons.min_turn_ms", "-1"]),
        ({"buttons": {"bounce_ms": True}}, ["buttons.bounce_ms", "True"]),
        ({"buttons": {"call_taps": 1}}, ["buttons.call_taps = 1", "2 to 5"]),
        ({"buttons": {"call_taps": 6}}, ["buttons.call_taps = 6", "2 to 5"]),
        ({"buttons": {"call_window_ms": 6000}}, ["buttons.call_window_ms = 6000", "confirm_end_ms (5000)"]),
        ({"buttons": {"call_window_ms": 20}}, ["buttons.call_window_ms = 20", "expected 30"]),
        ({"buttons": {"end_hold_ms": 10_000}}, ["buttons.end_hold_ms = 10000", "stuck_ms (10000)"]),
        ({"serial": {"baud": "fast"}}, ["serial.baud", "'fast'"]),
        ({"screen": {}}, ["[screen]"]),
        ({"screens": {"dim_after": 5}}, ["screens.dim_after", "5"]),
        ({"screens": {"i2c_hz": 400}}, ["screens.i2c_hz", "400"]),
        ({"panel": [{"faces": "C"}]}, ["panel[1].faces", "'C'"]),
        ({"panel": [{"faces": "A", "rotate": 1}]}, ["panel[1].rotate", "1"]),
        ({"panel": [{"faces": "A", "address": 200}]}, ["panel[1].address", "200"]),
        ({"panel": [{"faces": "A"}, {"faces": "A"}]}, ["same side"]),
        ({"panel": [{"faces": "A", "colour": "blue"}]}, ["panel[1].colour", "'blue'"]),
        ({"hall": {"port": 1883}}, ["hall", "broker"]),
        ({"hall": {"broker": "-oProxyCommand=x"}}, ["hall.broker", "'-oProxyCommand=x'"]),
        ({"hall": {"broker": "h", "port": 0}}, ["hall.port", "0"]),
        ({"hall": {"broker": "h", "keepalive_s": 1}}, ["hall.keepalive_s", "1"]),
        ({"hall": {"broker": "h", "user": "x"}}, ["hall.user", "'x'"]),
        ({"hall": "h"}, ["[hall]"]),
    ],
)
def test_a_bad_key_or_value_is_named(data, names):
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    for name in names:
        assert name in str(caught.value)


def test_a_call_of_two_to_five_taps_is_taken_as_docs_rules_md_says():
    """docs/rules.md: `buttons.call_taps` 2 to 5, both ends allowed."""
    for taps in (2, 5):
        assert parse_config({"buttons": {"call_taps": taps}}).timing.call_taps == taps


def test_the_hall_section_names_the_broker_and_keeps_the_password_out_of_errors():
    config = parse_config({"hall": {"broker": "192.168.4.1", "password": "s3cret", "tls_ca": "/etc/ca.pem"}})
    # with the hall's CA the port is hall-setup's TLS one, 8883 (docs/hall.md); without, 1883
    assert config.hall.broker == "192.168.4.1" and config.hall.port == 8883
    assert config.hall.password == "s3cret" and config.hall.tls_ca == "/etc/ca.pem"
    assert parse_config({"hall": {"broker": "h"}}).hall.port == 1883
    assert parse_config({"hall": {"broker": "h", "tls_ca": "/c", "port": 9}}).hall.port == 9
    assert parse_config({}).hall is None  # no [hall]: no network at all
    with pytest.raises(ConfigError, match="hall.password") as caught:
        parse_config({"hall": {"broker": "h", "password": "tab\there"}})
    assert "tab" not in str(caught.value)


def test_a_file_that_is_not_toml_is_named(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[clock\nrules = naspa\n")
    with pytest.raises(ConfigError, match="config.toml is not valid TOML"):
        load_config(path)


def test_time_options_override_the_file():
    config = with_times(parse_config({"clock": {"time_a": "20:00"}}), ["B=31:30"])
    assert config.times_s == {"A": 1200, "B": 1890}
    with pytest.raises(ConfigError, match="C=1:00"):
        with_times(config, ["C=1:00"])
    with pytest.raises(ConfigError, match="whole seconds"):
        with_times(config, ["A=1:00.5"])


def test_a_bare_number_for_a_starting_time_is_refused_with_the_fix():
    with pytest.raises(ConfigError, match=r'clock.time_a = \'30\': a starting time is m:ss: use "30:00"'):
        parse_config({"clock": {"time_a": "30"}})
    with pytest.raises(ConfigError, match=r'--time \'A=90\': a starting time is m:ss: use "90:00"'):
        with_times(Config(), ["A=90"])
    assert with_times(Config(), ["A=0:30"]).times_s["A"] == 30


def test_a_side_given_twice_or_in_lower_case_is_refused():
    with pytest.raises(ConfigError, match=r"A's time is already given \(--time A=1:00\)"):
        with_times(Config(), ["A=1:00", "A=2:00"])
    with pytest.raises(ConfigError, match="expected A=m:ss or B=m:ss"):
        with_times(Config(), ["a=1:00"])


def test_the_round_limit_is_a_rules_setting():
    assert parse_config({"clock": {"rules": "school"}}).profile.round_limit_s == 3000
    assert parse_config({"clock": {"rules": "school", "round_limit": "45:00"}}).profile.round_limit_s == 2700
    assert parse_config({"clock": {"rules": "school", "round_limit": "none"}}).profile.round_limit_s is None
    assert parse_config({"clock": {"round_limit": "40:00"}}).profile.round_limit_s == 2400  # any profile
    for bad in ("0:00", "soon", 45):
        with pytest.raises(ConfigError, match="clock.round_limit"):
            parse_config({"clock": {"round_limit": bad}})


def test_speech_is_off_unless_the_config_turns_it_on_for_a_side():
    from tileclock.clock.speech import SpeechSetting

    assert parse_config({}).speech == SpeechSetting() and not SpeechSetting().sides
    config = parse_config({"speech": {"sides": "B", "rate": 140, "volume": 120}})
    assert config.speech == SpeechSetting(frozenset("B"), 140, 120)
    assert parse_config({"speech": {"sides": "AB"}}).speech.sides == {"A", "B"}
    assert parse_config({"speech": {"large": "B"}}).speech == SpeechSetting(large=frozenset("B"))


@pytest.mark.parametrize(
    "section, message",
    [
        ({"sides": "C"}, "speech.sides = 'C': expected A, B, AB or nothing"),
        ({"sides": 1}, "speech.sides = 1: expected a string in quotes"),
        ({"rate": 20}, "speech.rate = 20: expected 80 to 450"),
        ({"volume": 300}, "speech.volume = 300: expected 0 to 200"),
        ({"volume": "loud"}, "speech.volume = 'loud': expected a whole number"),
        ({"voice": "en"}, "unknown key speech.voice = 'en'"),
        ({"large": "b"}, "speech.large = 'b': expected A, B, AB or nothing"),
        ({"large": True}, "speech.large = True: expected a string in quotes"),
    ],
)
def test_a_bad_speech_setting_names_its_key_and_value(section, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config({"speech": section})
