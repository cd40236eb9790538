"""The round comes from TSH (issue 38, point 4): `scores` and `hall` take TSH's next unscored round
from its `.t` files (or tourney.js) when `--round` is not given, and refuse a `--round` TSH is not
on yet in one line with both numbers. The samples' divisions have rounds 1 and 2 scored: TSH is on
round 3."""

import io
import os
import shutil
from contextlib import redirect_stdout

import pytest

from support.feeds import Feed
from support.hall_helpers import hall_page, page_json, wait_for
from support.tournament import DATA, TSH_FILES, play_round
from tileclock.cli import main
from tileclock.cli.errors import UsageError
from tileclock.cli.hall_checks import hall_round
from tileclock.director.event.entries import ScoreBook
from tileclock.director.event.hall_pairings import HallPairings
from tileclock.director.event.pairings import read_tsh
from tileclock.director.event.tsh_entry import next_rounds, round_in_tsh

ENTRIES = os.path.join(DATA, "scores", "round-3-slips.csv")
TOURNEY_JS = os.path.join(DATA, "tsh", "tourney.js")
# round 3 of division B as TSH has it once entered (Ito's bye, the forfeit, table 5)
B_DONE = {1: "50", 2: "346", 3: "50", 4: "-50", 5: "372"}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    return play_round(str(tmp_path_factory.mktemp("round3")))


@pytest.fixture
def ahead(tmp_path):
    """a.t as it is, and b.t with round 3 scored: A is on round 3, B on round 4."""
    shutil.copy(TSH_FILES[0], tmp_path / "a.t")
    lines = []
    with open(TSH_FILES[1], encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            head, scores, rest = line.rstrip("\n").split(";", 2)
            lines.append(f"{head};{scores} {B_DONE[number]};{rest}\n")
    (tmp_path / "b.t").write_text("".join(lines), encoding="utf-8")
    return [str(tmp_path / "a.t"), str(tmp_path / "b.t")]


def _scores(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["scores", *argv])
    return code, out.getvalue()


def test_tsh_s_next_round_is_one_past_the_fewest_scores(ahead):
    assert next_rounds([read_tsh(path) for path in TSH_FILES]) == {"A": 3, "B": 3}
    divisions = [read_tsh(path) for path in ahead]
    assert next_rounds(divisions) == {"A": 3, "B": 4}
    assert round_in_tsh(divisions) == 3 and round_in_tsh(divisions, 2) == 2
    assert round_in_tsh([], None) is None and round_in_tsh([], 5) == 5  # no TSH: nothing to check


@pytest.mark.parametrize("source", [TSH_FILES, [TOURNEY_JS]], ids=["t-files", "tourney-js"])
def test_scores_takes_the_round_from_tsh_when_none_is_given(played, tmp_path, source):
    code, printed = _scores(played, "--tsh", *source, "--entries", ENTRIES, "--out", str(tmp_path))
    assert code == 0
    assert printed.startswith("round 3: TSH's next unscored round\n")
    assert "division A, round 3:" in printed and "enter: 1 382 4 380" in printed
    assert os.path.exists(tmp_path / "round-3-A.tsh")


def test_a_round_tsh_is_not_on_is_refused_with_both_numbers(played, capsys):
    code = main(["scores", played, "--tsh", *TSH_FILES, "--round", "4", "--entries", ENTRIES, "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1, err
    assert "--round 4, but TSH is on round 3 in division A" in err
    assert "Anderson, Ann #1 has 2 scores" in err and "give --round 3" in err


def test_a_round_tsh_has_complete_is_read_back_not_entered(played, tmp_path):
    slips = tmp_path / "slips.csv"
    slips.write_text("table,score_a,score_b\n", encoding="utf-8")
    code, printed = _scores(played, "--tsh", *TSH_FILES, "--round", "2", "--entries", str(slips), "--dry-run")
    assert code == 0 and "round 2 is already complete in TSH" in printed


def test_divisions_on_different_rounds_take_the_earliest_and_say_the_other(played, ahead, capsys):
    code, printed = _scores(played, "--tsh", *ahead, "--entries", ENTRIES, "--dry-run")
    assert code == 0
    first = printed.splitlines()[0]
    assert first == "round 3: TSH's next unscored round (division B is on round 4: give --round for those)"
    assert "division B, round 3:\n  NOTHING ENTERED: round 3 is already complete in TSH" in printed
    assert main(["scores", played, "--tsh", *ahead, "--round", "4", "--dry-run"]) != 0
    assert "--round 4, but TSH is on round 3 in division A" in capsys.readouterr().err


def _scored(line, score):
    head, scores, rest = line.rstrip("\n").split(";", 2)
    return f"{head};{scores} {score};{rest}\n"


def test_the_hall_s_round_is_tsh_s_and_moves_on_when_tsh_rewrites_its_files(ahead):
    pairings = HallPairings(tsh=ahead)
    try:
        assert pairings.next_round == 3
        assert hall_round(pairings, None) is None and hall_round(pairings, 3) == 3
        with pytest.raises(
            UsageError, match=r"--round 5, but TSH's \.t files are on round 3: give --round 3"
        ):
            hall_round(pairings, 5)
        # TSH enters division A's round 3 and rewrites a.t: the round offered moves on
        with open(TSH_FILES[0], encoding="utf-8") as file:
            lines = file.readlines()
        done = ["382", "335", "410", "380", "285", "411"]
        with open(ahead[0], "w", encoding="utf-8") as file:
            file.write("".join(_scored(line, score) for line, score in zip(lines, done, strict=True)))
        os.utime(ahead[0], ns=(1, 1))  # a stamp of its own, whatever the file system's clock
        assert pairings.wait_fresh(5) and pairings.next_round == 4
    finally:
        pairings.close()


def test_the_hall_without_tsh_offers_the_director_s_round():
    assert hall_round(None, 4) == 4
    pairings = HallPairings(csv=os.path.join(DATA, "pairings", "round-3.csv"))
    try:
        assert pairings.next_round is None and hall_round(pairings, 7) == 7
    finally:
        pairings.close()


def test_the_page_offers_tsh_s_round_else_the_director_s(tmp_path):
    pairings = HallPairings(tsh=TSH_FILES)
    try:
        with hall_page(Feed(str(tmp_path)), pairings=pairings) as server:
            answer = page_json(server, "/api/round")
        assert answer["next"] == 3 and answer["round"] is None
    finally:
        pairings.close()
    with hall_page(Feed(str(tmp_path))) as server:
        server.given_round = 6
        assert page_json(server, "/api/round")["next"] == 6


def test_hall_refuses_a_round_tsh_is_not_on_before_it_starts(capsys):
    assert main(["hall", "--broker", "127.0.0.1", "--tsh", *TSH_FILES, "--round", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--round 4, but TSH's .t files are on round 3" in err


def test_the_scores_page_and_the_round_box_offer_tsh_s_round(ahead, tmp_path, browser):
    """The real pages in Chromium: with TSH on round 3 (division A; B is on 4), the Scores page's
    Round box and the main page's read 3, not their default 1."""
    pairings = HallPairings(tsh=ahead)
    book = ScoreBook(str(tmp_path / "scores"))
    try:
        with hall_page(Feed(str(tmp_path)), scores=book, pairings=pairings) as server:
            page = browser.new_context().new_page()
            base = server.address.rstrip("/")
            for path in ("/scores", "/"):
                page.goto(base + path)
                # the page's own CSP forbids the string evaluation wait_for_function polls with
                wait_for(lambda: page.input_value("#round") == "3", 15, "the Round box to read 3")
            # round 3 under way: both boxes say 3; once it is over, the Start box offers round 4 (TSH
            # still on 3 until its scores are in) while the Scores page keeps round 3's
            started = {"round": 3, "start_ms": 0, "start": "14:00", "boards": ["1"], "clocks": ["c1"]}
            for over, scores_box, start_box in ((False, "3", "3"), (True, "3", "4")):
                server.rounds.current = dict(started, over_ms=1) if over else started
                for path, box in (("/scores", scores_box), ("/", start_box)):
                    page.goto(base + path)
                    wait_for(lambda box=box: page.input_value("#round") == box, 15, f"{path}: round {box}")
    finally:
        pairings.close()
