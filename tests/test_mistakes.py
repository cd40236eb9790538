"""A newcomer's mistakes get one clear line each: nothing is guessed, nothing crashes, nothing is left unsaid."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from support.command_line import OPTIONS, WORDS, run


@pytest.mark.parametrize(
    "script, message",
    [
        ("", "the script has no lines to run"),
        ("# a comment only\n", "the script has no lines to run"),
        ("0 press a\n", "line 1: expected a button: A, B or STOP (buttons are written in capitals: A)"),
        ("0 down A\n1 down A\n", "line 2: A is already down then"),
        ("0 hold B 5\n2 press B\n", "line 2: B is already down then"),
        ("3 up STOP\n", "line 1: STOP is already up then"),
        (
            "0 send adjust \u00c4 -60000\n",
            "line 1: send takes a command in ASCII, as the serial line carries it",
        ),
    ],
)
def test_a_script_that_says_something_impossible_or_nothing_is_refused(script, message):
    code, out, err = run(["sim", "--script", "-"], script)
    assert (
        code == 2 and out == "" and err == f"tileclock: standard input, {message}" + err.split(message, 1)[1]
    )
    assert err.count("\n") == 1


def test_a_button_left_down_at_the_end_runs_and_is_mentioned(tmp_path):
    code, out, err = run(["sim", "--script", "-"], "0 press B\n10 down A\n")
    assert code == 0 and '"ev":"status"' in out.splitlines()[-1]
    assert err == "tileclock: standard input, line 2: A is still down when the script ends\n"


def test_a_script_that_is_not_text_names_its_file_and_line(tmp_path):
    path = tmp_path / "game.txt"
    path.write_bytes(b"0 press B\n\xff\xfe 1 press A\n")
    assert run(["sim", "--script", str(path)])[2] == f"tileclock: {path}, line 2: not UTF-8 text\n"


@pytest.mark.parametrize(
    "options, message",
    [
        (["--time", "A=90"], "--time 'A=90': a starting time is m:ss: use \"90:00\" for 90 minutes"),
        (["--time", "A=1:00", "--time", "A=2:00"], "A's time is already given (--time A=1:00)"),
        (["--time", "a=1:00"], "expected A=m:ss or B=m:ss"),
    ],
)
def test_times_are_m_ss_and_said_once(options, message):
    code, _, err = run(["sim", "--script", "-", *options], "0 press B\n")
    assert code == 2 and message in err


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "journal.log"
    code, out, _ = run(["sim", "--script", "-"], "0 press B\n10 press A\n")
    path.write_text(out)
    return path


def test_replay_past_the_end_says_so_and_shows_the_end(log):
    code, out, _ = run(["replay", str(log), "--at", "50:00"])
    lines = out.splitlines()
    unended = "its last record is 4, at 0:10.100 (no end was recorded): the state at the end"
    assert code == 0 and lines[0] == f"50:00 is past the end of this game: {unended}"
    assert lines[2].split()[:2] == ["A:", "24:50"] and "penalty   0" in lines[3]  # nothing run on
    code, out, _ = run(["replay", str(log), "--after-seq", "99"])
    assert out.splitlines()[0] == f"record 99 is past the end of this game: {unended}"


def test_replay_past_the_end_gives_the_games_own_end_and_the_logs_last_record(tmp_path):
    """A `set` for the next game comes after this one's `end`: the game ended at its `end`."""
    script = "0 press B\n2 press A\n4 press STOP\n5 hold STOP 2.5\n8.5 press STOP\n13 send set round=3\n"
    path = tmp_path / "game.log"
    path.write_text(run(["sim", "--script", "-"], script)[1])
    evs = [(r["seq"], r["ev"], r["t_ms"]) for r in map(json.loads, path.read_text().splitlines())]
    assert evs[-3:] == [(5, "end", 8500), (6, "set", 13000), (7, "status", 13000)]
    ended = "it ended at 0:08.500 (record 5); the log's last record is 7 (status), at 0:13.000"
    for option, past in (("--at", "27:10"), ("--after-seq", "40")):
        code, out, _ = run(["replay", str(path), option, past])
        first = "27:10" if option == "--at" else "record 40"
        assert (
            code == 0
            and out.splitlines()[0] == f"{first} is past the end of this game: {ended}: the state at the end"
        )
        assert out.splitlines()[1].endswith(": ended")
    path.write_text("\n".join(path.read_text().splitlines()[:6]) + "\n")  # the log stops at the end
    out = run(["replay", str(path), "--at", "27:10"])[1]
    assert (
        out.splitlines()[0]
        == "27:10 is past the end of this game: it ended at 0:08.500 (record 5): the state at the end"
    )


def test_replay_reads_what_export_wrote(log, tmp_path):
    assert run(["export", "--journal", str(log), str(tmp_path / "usb")])[0] == 0
    code, out, _ = run(["replay", str(tmp_path / "usb" / "game-1.json"), "--at", "0:05"])
    assert code == 0 and out.splitlines()[1].split()[:2] == ["A:", "24:55"]


def test_export_refuses_an_unknown_extension_and_an_empty_journal(log, tmp_path):
    code, _, err = run(["export", "--journal", str(log), str(tmp_path / "one.txt")])
    assert code == 2 and "export writes a folder, a .csv or a .json file, not .txt" in err
    assert not (tmp_path / "one.txt").exists()
    empty = tmp_path / "empty.log"
    empty.write_text("")
    code, out, err = run(["export", "--journal", str(empty), str(tmp_path / "out")])
    assert (
        code == 2 and f"nothing to export: {empty} holds no game" in err and not (tmp_path / "out").exists()
    )


@pytest.mark.parametrize("out", ["x.json", "y.csv", "usb", "stick/usb"])
def test_a_failed_export_writes_nothing_and_lists_the_games(log, tmp_path, out):
    before = sorted(os.listdir(tmp_path))
    code, printed, err = run(["export", "--journal", str(log), str(tmp_path / out), "--game", "99"])
    assert code == 2 and printed == ""
    assert err == f"tileclock: no game starts at seq 99 in {log} (games start at [1])\n"
    assert sorted(os.listdir(tmp_path)) == before  # no file, no folder, no half-written part


def test_a_failed_export_leaves_an_earlier_export_as_it_was(log, tmp_path):
    assert run(["export", "--journal", str(log), str(tmp_path / "x.json")])[0] == 0
    earlier = (tmp_path / "x.json").read_bytes()
    assert run(["export", "--journal", str(log), str(tmp_path / "x.json"), "--game", "99"])[0] == 2
    assert (tmp_path / "x.json").read_bytes() == earlier and json.loads(earlier)[0]["game_seq"] == 1


@pytest.mark.parametrize(
    "command", [["plot", "{log}", "{out}"], ["replay", "{log}", "--at", "0:05", "--plot", "{out}"]]
)
@pytest.mark.parametrize("name", ["x.txt", "x", "x.jpg"])
def test_a_picture_is_png_or_svg_and_nothing_else(log, tmp_path, command, name):
    out = tmp_path / name
    code, printed, err = run([word.format(log=log, out=out) for word in command])
    ending = os.path.splitext(name)[1] or "a name with no ending"
    assert code == 2 and printed == ""
    assert err == f"tileclock: {out}: a game's picture is written as a .png or a .svg file, not {ending}\n"
    assert not out.exists()


def test_a_name_with_a_newline_is_told_on_one_line(log):
    # (hypothesis found `plot - "\n"`: the name was printed as it was, over two lines)
    code, _, err = run(["plot", "-", "\n"], "0 press B\n")
    assert code == 2
    assert (
        err
        == "tileclock: \\n: a game's picture is written as a .png or a .svg file, not a name with no ending\n"
    )


def test_a_reader_that_stops_early_gets_no_complaint(tmp_path):
    script = tmp_path / "long.txt"  # ~300 kB of records: far more than a pipe holds
    script.write_text("".join(f"{n} press {'AB'[n % 2]}\n" for n in range(1000)))
    result = subprocess.run(
        f"{sys.executable} -m tileclock sim --script {script} | head -1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert '"ev":"boot"' in result.stdout and result.stderr == ""


# Every command that reads a file, given any bytes or any JSON: an answer or one line of error, never a traceback.
READERS = [
    ["replay", "{path}", "--at", "0:05"],
    ["replay", "{path}", "--after-seq", "3"],
    ["export", "--journal", "{path}", "{out}"],
    ["sim", "--script", "{path}"],
    ["sim", "--config", "{path}", "--script", "-"],
    ["plot", "{path}", "{out}.svg"],
    ["sheet", "{path}", "--pairings", "{path}", "--round", "1", "--out", "{out}"],
    ["sheet", "{path}", "--tsh", "{path}", "--out", "{out}"],
    ["sheet", "{path}", "--config", "{path}", "--out", "{out}"],
    ["scores", "{path}", "--tsh", "{path}", "--round", "1", "--out", "{out}"],
    ["scores", "{path}", "--config", "{path}", "--round", "1", "--out", "{out}"],
    ["scores", "{path}", "--tsh", "{path}", "--round", "1", "--entries", "{path}", "--dry-run"],
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["ev", "seq", "t_ms", "A", "records", "crc", "state"]) | st.text(max_size=4), inner, max_size=4),
    max_leaves=10,
)  # fmt: skip  # one strategy a line
CONTENT = st.one_of(
    st.binary(max_size=200),
    st.lists(JSON.map(json.dumps), max_size=4).map(lambda lines: "\n".join(lines).encode()),
    JSON.map(lambda value: json.dumps(value, indent=1).encode()),
)


@settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=st.sampled_from(READERS), content=CONTENT)
def test_any_file_gets_an_answer_or_one_line_of_error(tmp_path, command, content):
    path = tmp_path / "input"
    path.write_bytes(content)
    argv = [word.format(path=path, out=tmp_path / "out") for word in command]
    code, _, err = run(argv, "0 press B\n")
    assert code in (0, 1, 2)
    if code:
        assert err.startswith("tileclock: ") or err.startswith("usage: "), err
        assert "Traceback" not in err and err.strip().count("\n") <= 1 + err.startswith("usage: "), err


@settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=st.sampled_from(sorted(OPTIONS)), data=st.data())
def test_any_arguments_get_an_answer_or_one_line_of_error(log, tmp_path, monkeypatch, command, data):
    monkeypatch.chdir(tmp_path)  # whatever it writes, it writes here
    words = data.draw(
        st.lists(st.one_of(st.sampled_from(OPTIONS[command]), WORDS, st.just(str(log))), max_size=6)
    )
    code, _, err = run([command, *words], "0 press B\n")
    assert code in (0, 1, 2), (words, err)
    if code:
        assert "Traceback" not in err and (err.startswith("tileclock: ") or err.startswith("usage: ")), (
            words,
            err,
        )
        assert err.startswith("usage: ") or err.strip().count("\n") == 0, (words, err)
