"""The wrong round is loud: a sheet run for round 2 over games the clocks recorded as round 1.

Tried as a new user would: the clocks were told round 1 (the director's `set`), the director then
typed `--round 2`. Each such game is listed as a mismatch naming both rounds, and nothing of it is
matched to round 2's pairings.
"""

import csv
import io
import re
from contextlib import redirect_stdout

from support.tournament import END, TSH_FILES, play
from tileclock.cli import main


def test_a_sheet_for_round_2_over_round_1_games_names_both_rounds(tmp_path):
    for table in ("1", "2", "3"):
        play(str(tmp_path), table, f"0 send set round=1 table={table}\n1 press B\n26:00 press A\n"
             "27:00 press STOP\n" + END.format(t="27:10", t2="27:13.5"))  # fmt: skip  # one script a table
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["sheet", str(tmp_path / "records"), "--tsh", *TSH_FILES, "--round", "2",
                     "--out", str(tmp_path / "sheets"), "--no-pictures"])  # fmt: skip  # as typed
    assert code == 0
    printed = out.getvalue()
    for table in ("1", "2", "3"):
        assert re.search(
            rf"MISMATCH round 2, table {table}: board {table} \(clock \w+\), game 1 at table {table} was "
            r"recorded as round 1, not round 2: it is not matched to round 2's pairing",
            printed,
        ), printed
    with open(tmp_path / "sheets" / "round-2.csv", newline="", encoding="utf-8") as file:
        rows = {row["table"]: row for row in csv.DictReader(file)}
    assert all("recorded as round 1, not round 2" in rows[t]["problems"] for t in ("1", "2", "3"))
    assert all(rows[t]["game"] == "" and rows[t]["first_overtime_pen"] == "" for t in ("1", "2", "3"))
    # the same games, with the right round: matched, no mismatch about rounds
    out = io.StringIO()
    with redirect_stdout(out):
        main(["sheet", str(tmp_path / "records"), "--tsh", *TSH_FILES, "--round", "1",
              "--out", str(tmp_path / "sheets"), "--no-pictures"])  # fmt: skip  # as typed
    assert "recorded as round" not in out.getvalue()
