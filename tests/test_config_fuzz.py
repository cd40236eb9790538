"""Any config file at all: the clock either understands it or names what it cannot use."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tileclock.device.config import Config, ConfigError, load_config, parse_config

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


@settings(max_examples=1500, deadline=None)
@given(DOCUMENTS)
def test_any_parsed_config_is_understood_or_refused_with_a_config_error(document):
    try:
        config = parse_config(document)
    except ConfigError as error:
        assert str(error)  # says what is wrong
        return
    assert isinstance(config, Config)


@settings(max_examples=500, deadline=None)
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
