"""The self-test through `tileclock sim --script` (issue 40): the buttons' gesture or the director's
`selftest` command, the buttons answered, the record and the panels' PASS (or what failed).
"""

import os

from PIL import Image

from conftest import events
from tileclock.clock.selftest import SelfTestView
from tileclock.device.screen.selftest_screen import render_selftest
from tileclock.device.screen.text import Panel

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")

#: STOP held, both sides held together 3.5 s, all let go (docs/rules.md, "The self-test")
GESTURE = "1 down STOP\n2 down A\n2 down B\n5.5 up A\n5.5 up B\n6 up STOP\n"
ANSWERS = "8 press A\n9 press B\n10 press STOP\n"


def frames(directory, side):
    """The frames `side`'s panel showed, oldest first, as (ms, bytes)."""
    names = sorted(n for n in os.listdir(directory) if n.endswith(f"-{side}.png"))
    return [(int(n[1:10]), Image.open(os.path.join(directory, n)).convert("1").tobytes()) for n in names]


def golden(name):
    return Image.open(os.path.join(GOLDEN, name)).convert("1").tobytes()


def test_a_self_test_played_through_the_simulator_passes_and_says_so(sim, tmp_path):
    records = sim(GESTURE + ANSWERS + "20 until\n", "--frames", str(tmp_path))
    (test,) = events(records, "selftest")
    assert test["result"] == "pass" and test["failed"] == [] and test["source"] == "buttons"
    assert {b: test["buttons"][b]["held_ms"] for b in ("A", "B", "STOP")} == {"A": 100, "B": 100, "STOP": 100}
    assert (
        test["buttons"]["A"]["answer_ms"] == 2000 and test["t_ms"] == 12_100
    )  # lit 2 s after STOP's release
    assert [r["ev"] for r in records] == ["new_game", "selftest", "status"]  # the presses were the test's
    assert records[-1]["state"] == "ready" and records[-1]["A"]["used_ms"] == 0
    for side in "AB":
        shown = frames(tmp_path, side)
        assert shown[-1][1] == golden(f"selftest_pass-{side}.png")
        assert golden(f"selftest_light-{side}.png") in [frame for _, frame in shown]
        assert golden(f"selftest_a-{side}.png") in [frame for _, frame in shown]


def test_the_game_after_it_starts_with_the_first_press_as_ever(sim):
    records = sim(GESTURE + ANSWERS + "20 press B\n80 press A\n90 until\n")
    assert [r["ev"] for r in records] == ["new_game", "selftest", "start", "switch", "status"]
    assert records[-1]["A"]["used_ms"] == 60_000


def test_a_dead_button_is_named_in_the_failure(sim, tmp_path):
    # B is dead: nobody can make it answer, so after 10 s STOP is asked
    script = GESTURE + "8 press A\n9 press B\n19.5 press STOP\n30 until\n"
    records = sim(script.replace("9 press B\n", ""), "--frames", str(tmp_path))
    (test,) = events(records, "selftest")
    assert test["result"] == "fail" and test["failed"] == ["B not pressed"]
    assert test["buttons"]["B"] == {"answer_ms": None, "held_ms": None, "chatter": 0}
    failed = SelfTestView("result", answered=("A", "STOP"), result="fail", failed=("B not pressed",))
    for side in "AB":  # the panels end on FAIL, B NOT PRESSED
        assert frames(tmp_path, side)[-1][1] == render_selftest(failed, Panel(faces=side)).tobytes()


def test_the_director_s_selftest_command_drives_it_and_is_refused_once_the_game_began(sim):
    records = sim("1 send selftest by=desk\n2 press A\n3 press B\n4 press STOP\n10 until\n")
    (test,) = events(records, "selftest")
    assert test["result"] == "pass" and test["source"] == "serial" and test["by"] == "desk"
    records = sim("1 press B\n5 press STOP\n6 send selftest\n10 until\n")
    assert "fresh game" in events(records, "error")[0]["detail"] and not events(records, "selftest")
