"""`tileclock scores`: a round's final scores, every penalty applied by rule, as lines for TSH.

From the recorded games, the TSH pairings and the score entries (the slips' scores, by side), it
writes per division `round-N-DIV.tsh` (paste at TSH's `tsh>` prompt: `a N DIV`, a line a game,
an empty line), `round-N-DIV-forfeits.tsh` when a forfeit needs a pairing changed first (the
`pair` commands, then the forfeit lines: read it, then paste it), and `round-N-scores.csv` (a row
a table: the slip, each step, the final scores, the TSH line or why there is none). `--dry-run`
prints what would be entered beside each table's slip values and writes nothing. It never writes
into the `.t` files. With `--tsh-dir DIR` (TSH's folder) the pairings come from DIR's `config.tsh`
and the `aps` commands TSH's remote queue would take are shown; `--queue` puts them there.
"""

import csv
import os

from ..director.event.hall_queue import (
    NOT_TAKEN,
    REFUSED_S,
    key_of,
    likely_refusal,
    not_taken,
    queued_apart,
    queued_state,
)
from ..director.event.inputs import entries_by_table, parse_seats
from ..director.event.round_scores import read_inputs, round_scores
from ..director.event.tsh_entry import next_rounds, round_in_tsh
from ..director.event.tsh_queue import QueueRecord, games_of, not_read, queue_games
from .errors import given_by_the_user

CSV_COLUMNS = [
    "round", "division", "table", "status", "tsh_line",
    "first_number", "first_name", "first_entered", "first_final",
    "second_number", "second_name", "second_entered", "second_final",
    "steps", "reasons", "entries",
]  # fmt: skip  # grouped as a director reads them


def run_scores(args, out):
    """Settle round `args.round` (else TSH's next unscored round, from its `.t` files) and write
    (or, with `--dry-run`, show) the lines for TSH."""
    tsh_dir = getattr(args, "tsh_dir", None)
    tsh_config = os.path.join(tsh_dir, "config.tsh") if tsh_dir else args.tsh_config
    with given_by_the_user():  # each reader's ValueError names the option or file it read
        inputs = read_inputs(args.games, args.tsh, tsh_config, args.tables)
        number = round_in_tsh(inputs.divisions, args.round)
        notes = []  # the rows of other rounds, left out
        by_table = entries_by_table(args.entries, number, notes)
        seats = parse_seats(args.seat)
        found = round_scores(inputs, number, by_table, seats)
    if args.round is None:
        print(f"round {number}: TSH's next unscored round{_elsewhere(inputs.divisions, number)}", file=out)
    results = found.results
    for text in notes + found.problems:
        print(f"left out: {text}", file=out)
    for text in found.mismatches:
        print(f"MISMATCH {text}", file=out)
    _report(results, out)
    if not args.dry_run:
        for path in write_scores(args.out, number, results):
            print(path, file=out)
    if tsh_dir:
        # settled again for the queue, from the same reading: `aps` takes scores whatever `entry` says
        queued = round_scores(inputs, number, by_table, seats, queued=True).results
        if not_read(inputs.config):
            print(f"NOTE: {not_read(inputs.config)}", file=out)
        really = args.queue and not args.dry_run
        seen = {key_of(division, line) for division in queued for line in division.lines + division.forfeits}
        return _queue(tsh_dir, args.out, games_of(queued), really, out, inputs.divisions, number, seen)
    return 0


def _elsewhere(divisions, taken):
    """`(division B is on round 4)`: the divisions TSH has further on than `taken`, or ''."""
    ahead = [
        f"division {name} is on round {number}"
        for name, number in next_rounds(divisions).items()
        if number != taken
    ]
    return f" ({'; '.join(ahead)}: give --round for those)" if ahead else ""


def _queue(tsh_dir, records, games, really, out, divisions=(), number=None, seen=()):
    """Show (or, `really`, queue) the games' `aps` commands for TSH's queue; 1 when it failed.
    `divisions`, TSH's as its files say now, give a score it never took its likely reason; a game
    of round `number` queued earlier whose table is not among the keys `seen` (the round's
    lines) is said too."""
    for game in games:
        if not game.commands:
            print(f"FOR THE DIRECTOR {game.label}: a forfeit; `aps` cannot say it. Type at TSH:", file=out)
            for line in game.pairs:
                print(f"    {line}", file=out)
            continue
        if not really:
            for command in game.commands:
                print(f"would queue: {command}", file=out)
    if not really:
        if games:
            print("(a dry run: give --queue to put these into TSH's queue)", file=out)
        return 0
    outcome = queue_games(tsh_dir, records, games)
    commands = {game.key: game.commands for game in games}
    for key in outcome.queued:  # only what went into the queue now: the rest is said below
        print(f"queued {key}: " + "; ".join(commands[key]), file=out)
    record = QueueRecord(records) if outcome.already else None
    for key in outcome.already:  # queued, and TSH's .t file does not have it yet
        late = (record.age(key) or 0) > REFUSED_S
        print(f"already queued {key}: not queued again; not in TSH's .t file yet", file=out)
        if late:
            why = likely_refusal(divisions, record.games[key].get("commands", []))
            print(f"    {not_taken(why) if why else NOT_TAKEN}", file=out)
    if number is not None and not outcome.error:  # (a record that is none is the error)
        queued = QueueRecord(records)
        for key in queued_apart(queued, number, seen):
            state = queued_state(queued, key, divisions)
            if state["tsh"] == "in TSH":
                continue  # (a bye, once TSH has it, has no line: nothing to say)
            print(f"queued earlier {key}: not in round {number}'s pairings as TSH's files say now", file=out)
            if state["tsh_why"]:
                print(f"    {state['tsh_why']}", file=out)
    for key in outcome.changed:
        print(f"CHANGED {key} after it was queued: not queued again; change it in TSH (`es`)", file=out)
    if outcome.woke:
        print(outcome.woke, file=out)
    if outcome.error:
        print(f"NOT QUEUED: {outcome.error}", file=out)
        return 1
    return 0


def _report(results, out):
    """The dry run: each table's slip beside what is entered, and why a table gets nothing."""
    for division in results:
        print(f"division {division.name}, round {division.round}:", file=out)
        if division.refused:
            print(f"  NOTHING ENTERED: {division.refused}", file=out)
        for line in division.lines + division.forfeits:
            where = f"table {line.table}" if line.table else "bye"
            settled = line.settled
            slip = ""
            if settled is not None and settled.entered:
                slip = " slip " + ", ".join(
                    f"{side} {settled.names[side].name} {score}"
                    for side, score in sorted(settled.entered.items())
                )
            print(f"  {where}:{slip}", file=out)
            for step in settled.steps if settled is not None else []:
                print(f"    {step}", file=out)
            if line.text:
                shown = line.text.replace("\n", " / ")
                extra = {
                    "forfeit": " (after the pairing change: see the forfeits file)",
                    "bye": f" ({line.players[0][1]}'s bye; had they forfeited instead, it is -50)",
                }.get(line.what, "")
                print(f"    enter: {shown}{extra}", file=out)
            elif line.what == "already in TSH":
                print("    already in TSH as these scores: nothing to enter", file=out)
            for reason in line.reasons:
                print(f"    NOT ENTERED: {reason}" if line.what != "bye" else f"    {reason}", file=out)


def write_scores(outdir, round_number, results):
    """Write each division's paste file (and forfeits file), and the round's CSV; returns the paths."""
    os.makedirs(outdir, exist_ok=True)
    written = []
    for division in results:
        for suffix, text in (("", division.paste()), ("-forfeits", division.confirm())):
            path = os.path.join(outdir, f"round-{round_number}-{division.name}{suffix}.tsh")
            if text:
                with open(path, "w", encoding="utf-8", newline="\n") as file:
                    file.write(text)
                written.append(path)
            elif os.path.exists(path):
                os.remove(path)  # an old file must never be pasted again by mistake
    path = os.path.join(outdir, f"round-{round_number}-scores.csv")
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for division in results:
            for line in division.lines + division.forfeits:
                writer.writerow({k: _cell(v) for k, v in _row(round_number, division, line).items()})
    written.append(path)
    return written


def _row(round_number, division, line):
    row = dict.fromkeys(CSV_COLUMNS, "")
    row.update(round=round_number, division=division.name, table=line.table, status=line.what)
    row["tsh_line"] = line.text.replace("\n", " / ")
    settled = line.settled
    by_number = {}
    if settled is not None:
        for side, player in settled.names.items():
            by_number[player.number] = side
        row["steps"] = "; ".join(settled.steps)
        row["entries"] = "; ".join(
            f"{e.by}{'@' + e.at if e.at else ''}: A {e.scores.get('A', '-')} B {e.scores.get('B', '-')}"
            + (f" seat A #{e.seat_a}" if e.seat_a else "")
            for e in settled.entries
        )
    for place, (pn, name, score) in zip(("first", "second"), line.players, strict=False):
        side = by_number.get(pn)
        row[f"{place}_number"], row[f"{place}_name"], row[f"{place}_final"] = pn, name, score
        if settled is not None and side in settled.entered:
            row[f"{place}_entered"] = settled.entered[side]
    row["reasons"] = "; ".join(line.reasons)
    return row


def _cell(value):
    text = str(value)
    formula = text[:1] in ("=", "+", "-", "@", "\t", "\r") and not text.lstrip("-").isdigit()
    return "'" + text if formula else text
