"""Any config file at all: the clock either understands it or names what it cannot use."""

from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from tileclock.clock.core import ButtonTiming
from tileclock.device.config import ConfigError, load_config, parse_config
from tileclock.device.config_schema import Config, HallConfig, PanelConfig
from tileclock.device.screen.idle import IdlePolicy

KEYS = (
    "board rules time_a time_b checkpoint_s a b stop backend bounce_ms min_turn_ms port baud faces driver "
    "address rotate contrast dim_after_s i2c_hz x"
).split()
SECTIONS = ["clock", "buttons", "serial", "screens", "panel", "screen"]
VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**40), 2**40),
        st.floats(allow_nan=False),
        st.sampled_from(
            ["naspa", "school", "25:00", "0:00", "99:99", "A", "B", "ssd1306", "i2c", "mock", ""]
        ),
        st.text(max_size=12),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
DOCUMENTS = st.dictionaries(
    st.sampled_from(SECTIONS),
    st.one_of(
        st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=5),
        st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4), max_size=3),
        VALUES,
    ),
    max_size=4,
)
# Each section with its own keys and values near what each key takes (small numbers, range edges,
# the words the config knows): these reach the checks deep inside each section, which documents
# made of any key and any value rarely get past the first refusal to reach.
SECTION_KEYS = {
    "clock": ["board", "id", "rules", "time_a", "time_b", "checkpoint_s"],
    "buttons": ["a", "b", "stop", "backend", *(f.name for f in fields(ButtonTiming))],
    "serial": ["port", "baud"],
    "screens": ["i2c_hz", *(f.name for f in fields(IdlePolicy))],
    "hall": [f.name for f in fields(HallConfig)],
}
NEAR = st.one_of(
    st.integers(-2, 30),
    st.sampled_from([0x02, 0x03, 0x3C, 0x77, 0x78, 255, 256, 599, 600, 601, 9_999, 10_000, 65_535, 65_536]),
    st.sampled_from([115_200, 400_000, 3_400_000, 3_400_001]),
    st.sampled_from(["naspa", "school", "nsa1997", "25:00", "0:00", "-1:00", "5", "A", "B", "C"]),
    st.sampled_from(["ssd1306", "sh1106", "i2c", "spi", "mock", "gpiod", "lgpio", "auto", "127.0.0.1"]),
    st.sampled_from(["board-1", "-x", "a b", "\x07", ""]),
    st.booleans(),
    VALUES,
)
PANEL = st.dictionaries(st.sampled_from([f.name for f in fields(PanelConfig)] + ["x"]), NEAR, max_size=8)
TYPED_DOCUMENTS = st.fixed_dictionaries(
    {},
    optional={
        **{
            name: st.dictionaries(st.sampled_from([*keys, "x"]), NEAR, max_size=4)
            for name, keys in SECTION_KEYS.items()
        },
        "panel": st.lists(PANEL, max_size=3),
    },
)


@settings(max_examples=examples(600), deadline=None)
@given(st.one_of(DOCUMENTS, TYPED_DOCUMENTS))
def test_any_parsed_config_is_understood_or_refused_with_a_config_error(document):
    try:
        config = parse_config(document)
    except ConfigError as error:
        assert str(error)  # says what is wrong
        return
    assert isinstance(config, Config)


@settings(max_examples=examples(500), deadline=None)
@given(st.binary(max_size=300))
def test_any_file_is_read_or_refused_with_a_config_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "config.toml"
    path.write_bytes(data)
    try:
        load_config(str(path))
    except ConfigError as error:
        assert str(path) in str(error)


def test_a_refused_config_names_the_key_and_value_and_changes_nothing():
    document = {"clock": {"rules": "naspa", "board": 3}}
    with pytest.raises(ConfigError, match=r"^clock\.board = 3: expected a string"):
        parse_config(document)
    assert document == {"clock": {"rules": "naspa", "board": 3}}  # the caller's tables are left as they were
