"""The penalty sheet of a round: what a director enters scores from, as CSV and as a printable page.

One row a table: the two players (first, then second), each one's overtime penalty, late penalty
and total to deduct, any forfeit with its consequence spelled out, the corrections made, notes to
check, and every mismatch between the games and the pairings, in words.
"""

import csv
import html
import os

from ...wire.records import SIDES
from .matching import other_side

COLUMNS = [
    "round", "table", "division", "first", "second", "first_side",
    "first_overtime_pen", "first_late_pen", "first_total_pen",
    "second_overtime_pen", "second_late_pen", "second_total_pen",
    "forfeit", "consequence", "corrections", "notes", "problems", "board", "game", "picture",
    "first_entered", "first_final", "second_entered", "second_final", "steps",
]  # fmt: skip  # the sheet's columns in groups, as a director reads them (the scores' last: added later)

ABSENCE_RULE = {"naspa": "NASPA III.C", "school": "school rule 25"}


def sides_in_order(table):
    """(first side, second side) of a table's game: by who moved first, else A then B."""
    game = table.game
    first = game.first_side if game is not None and game.first_side else "A"
    return first, other_side(first)


def consequence(table):
    """The forfeit of a table's game and what follows from it, in words ('' if none)."""
    game = table.game
    if game is None or not game.forfeit:
        return ""
    player, reason = game.forfeit
    if player == "both":
        return "Both players absent: a double forfeit. Both lose; record -50 spread for each."
    if player not in SIDES:
        return f"Forfeit ({reason or 'no reason given'}): check the game record."
    loser, winner = table.player(player), table.player(other_side(player))
    if reason == "overtime_limit":
        kept = game.sides[other_side(player)].total_pen
        return (
            f"{loser} exceeded 10 minutes of overtime and loses the game (NASPA V.G.3). Deduct 100 from "
            f"{loser}'s score. {winner}'s usual penalty stands ({kept}). If {loser} still has the greater "
            f"score, raise {winner}'s score to win by one point. Tiles left on racks are disregarded; no recount."
        )
    if reason == "absent":
        rule = ABSENCE_RULE.get(game.rules, "absence")
        return (
            f"{loser} did not arrive in time and forfeits ({rule}). {winner} wins by forfeit: "
            f"record +50 spread for {winner} and -50 for {loser}. No game was played: the clock's "
            "penalties do not apply."
        )
    return f"{loser} forfeits ({reason or 'no reason given'}); {winner} wins. Check the game record."


def sheet_rows(match, pictures=None, settled=None):
    """The CSV rows (dicts with `COLUMNS`) of a `matching.RoundMatch`; `pictures`: game -> file name;
    `settled`: table -> `scoring.Settled`, when scores were entered (each step, the final scores)."""
    pictures = pictures or {}
    settled = settled or {}
    rows = []
    for table in match.tables:
        pairing, game = table.pairing, table.game
        row = dict.fromkeys(COLUMNS, "")
        row.update(round=match.round, table=table.table or "")
        if pairing is not None:
            row["division"] = pairing.players[0].division
            if not table.names:
                row.update(first=pairing.players[0].label(), second=pairing.players[1].label())
        if game is not None:
            first, second = sides_in_order(table)
            row.update(first=table.player(first), second=table.player(second))
            row["first_side"] = first if game.first_side else ""
            for place, side in (("first", first), ("second", second)):
                figures = game.sides[side]
                row[f"{place}_overtime_pen"] = figures.overtime_pen
                row[f"{place}_late_pen"] = figures.late_pen
                row[f"{place}_total_pen"] = figures.total_pen
            if game.forfeit:
                row["forfeit"] = f"{game.forfeit[0]} {game.forfeit[1]}".strip()
            row["consequence"] = consequence(table)
            row["corrections"] = "; ".join(c.text(table.player(c.player)) for c in game.corrections)
            row["notes"] = "; ".join(_named(note, table) for note in game.notes)
            row["board"] = game.board or ""
            row["game"] = game.game_seq
            row["picture"] = pictures.get(id(game), "")
        row["problems"] = "; ".join(table.problems)
        if table.table in settled and game is not None:
            _scores(row, settled[table.table], sides_in_order(table))
        rows.append(row)
    return rows


def _scores(row, result, sides):
    """The entered and final scores of a table, and each step from one to the other."""
    for place, side in zip(("first", "second"), sides, strict=True):
        row[f"{place}_entered"] = result.entered.get(side, "")
        if side in result.final:
            row[f"{place}_final"] = result.final[side]
        elif side in result.forfeit_spread:
            row[f"{place}_final"] = result.forfeit_spread[side]  # a forfeit's spread (the steps say so)
    steps = list(result.steps) + [
        f"not entered: {reason}" for reason in result.reasons if reason not in row["problems"]
    ]
    row["steps"] = "; ".join(steps)


def _named(text, table):
    """A note about sides, with the players' names where the table knows them."""
    for side in SIDES:
        if side in table.names:
            text = text.replace(f"{side}'s", f"{table.player(side)}'s")
    return text


def write_csv(path, rows):
    """The sheet as CSV; no cell can start a spreadsheet formula."""
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: _cell(value) for key, value in row.items()})


def _cell(value):
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_number(text) else text


def _is_number(text):
    return text.lstrip("-").isdigit()


PAGE_STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #444; padding: 0.25em 0.4em; vertical-align: top; font-size: 0.9em; }
th { background: #eee; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.total { font-weight: bold; }
tr.detail td { border-top: none; font-size: 0.85em; }
.problems { border: 2px solid #b00; padding: 0.5em 1em; margin: 1em 0; }
.problems h2, .left h2 { font-size: 1.1em; margin: 0.2em 0; }
.left { margin-top: 1em; }
.consequence { font-weight: bold; }
@media print { a { color: black; text-decoration: none; } .noprint { display: none; } }
"""


def write_page(path, match, rows, schedule=None, title=""):
    """The sheet as a printable HTML page (every text escaped)."""
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(title or f'Round {match.round}: penalty sheet')}</title>",
        f"<style>{PAGE_STYLE}</style></head><body>",
        f"<h1>{e(title or f'Round {match.round}: penalty sheet')}</h1>",
        "<p>Penalties are points to deduct from each player's score. "
        "The first player is the one whose clock ran first in play.</p>",
    ]
    if match.problems:
        out.append('<div class="problems"><h2>Mismatches to settle before entering scores</h2><ul>')
        out += [f"<li>{e(text)}</li>" for text in match.problems]
        out.append("</ul></div>")
    out.append(
        "<table><thead><tr><th rowspan=2>Table</th><th rowspan=2>First</th><th colspan=3>First: deduct</th>"
        "<th rowspan=2>Second</th><th colspan=3>Second: deduct</th><th rowspan=2>Game</th></tr>"
        "<tr><th>overtime</th><th>late</th><th>total</th><th>overtime</th><th>late</th><th>total</th></tr>"
        "</thead><tbody>"
    )
    for row in rows:
        game = f"board {row['board']}, game {row['game']}" if row["game"] != "" else "no game"
        if row["picture"]:
            game += f' <a href="{e(row["picture"])}">picture</a>'
        out.append(
            f"<tr><td>{e(str(row['table']))}</td><td>{e(row['first'])}</td>"
            + _numbers(row, "first")
            + f"<td>{e(row['second'])}</td>"
            + _numbers(row, "second")
            + f"<td>{game if row['picture'] else e(game)}</td></tr>"
        )
        details = [
            ("consequence", "Forfeit", row["consequence"]),
            ("", "Corrections", row["corrections"]),
            ("", "Check", row["notes"]),
            ("", "Mismatch", row["problems"]),
            ("", "Scores", row["steps"]),
        ]
        for css, label, text in details:
            if text:
                out.append(
                    f'<tr class="detail"><td></td><td colspan=9 class="{css}"><b>{label}:</b> {e(text)}</td></tr>'
                )
    out.append("</tbody></table>")
    if schedule is not None and schedule.byes:
        out.append('<div class="left"><h2>No opponent this round (from the pairings)</h2><ul>')
        for bye in schedule.byes:
            score = "" if bye.score is None else f", {bye.score:+d}"
            out.append(f"<li>{e(bye.player.label())}: {bye.kind}{score}</li>")
        out.append("</ul></div>")
    if match.left_out:
        out.append('<div class="left"><h2>Left out</h2><ul>')
        out += [f"<li>{e(text)}</li>" for text in match.left_out]
        out.append("</ul></div>")
    out.append("</body></html>")
    with open(path, "w", encoding="utf-8") as file:
        file.write("\n".join(out) + "\n")


def _numbers(row, place):
    cells = [row[f"{place}_overtime_pen"], row[f"{place}_late_pen"], row[f"{place}_total_pen"]]
    classes = ["n", "n", "n total"]
    return "".join(f'<td class="{c}">{html.escape(str(v))}</td>' for c, v in zip(classes, cells, strict=True))


def write_sheet(outdir, match, schedule=None, pictures=None, title="", settled=None):
    """Write `round-N.csv` and `round-N.html` into `outdir`; returns their paths."""
    os.makedirs(outdir, exist_ok=True)
    rows = sheet_rows(match, pictures, settled)
    csv_path = os.path.join(outdir, f"round-{match.round}.csv")
    page_path = os.path.join(outdir, f"round-{match.round}.html")
    write_csv(csv_path, rows)
    write_page(page_path, match, rows, schedule, title)
    return [csv_path, page_path]
