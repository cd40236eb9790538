"""The score entry routes of the hall's page (docs/hall.md, "Scores at the board").

    GET  /S/TABLE/SIDE/TOKEN         the phone-sized score form of a table's game (also /s/...)
    GET  /api/score/TABLE/SIDE/TOKEN what the form shows: the table, the penalties the clock applies
    POST /api/score/TABLE/SIDE/TOKEN score_a, score_b[, seat_a]: a phone's entry for its game
    GET  /scores                     the director's page of the round's entries (hall_page/scores.html)
    GET  /api/scores?round=N         every table's entries, who made them and when, agreed or not
    POST /api/scores/TABLE           round, score_a, score_b[, seat_a]: the director's entry or correction
    POST /api/scores/TABLE/link      round: a new token for the table's game; the two phones' links
    POST /api/round/lock             round=N: no entry or correction after this

The link in the QR code is upper case (QR's compact alphanumeric mode), so the form answers to
`/S/` as well as `/s/`. A phone needs only the token; the director's entries need the page's own
script (its header and Origin), as every command from the page does.
"""

import asyncio

from starlette.routing import Route

from ...wire.protocol import is_label
from ..event.entries import EntryRefused
from .board_routes import who


def score_routes(hall, command_form, file, json_, text):
    """The routes above for `hall` (a `HallPage` with a `scores` book), with the app's helpers."""
    book = hall.scores

    def off():
        return text(404, "score entry is not on for this hall")

    async def form_page(request):
        if book is None:
            return off()
        return file("score.html")

    async def form_data(request):
        if book is None:
            return off()
        table, side, token = (request.path_params[k] for k in ("table", "side", "token"))
        try:
            round_number = book.game_of(table, token)
        except EntryRefused as error:
            return text(403, str(error))
        table = book.table_of(token)
        facts = await asyncio.to_thread(hall.table_facts, table, round_number)
        return json_({"round": round_number, "table": table, "side": side.upper(), **facts})

    async def phone_entry(request):
        if book is None:
            return off()
        form, refused = await command_form(request)
        if refused:
            return refused
        table, side, token = (request.path_params[k] for k in ("table", "side", "token"))
        if side.upper() not in ("A", "B"):
            return text(404, "not found")
        try:
            round_number = book.game_of(table, token)
            table = book.table_of(token)  # `12`, or `a1` where the link says `A1`
            book.enter(round_number, table, _one(form, "score_a"), _one(form, "score_b"), f"phone {side.upper()}",
                       _one(form, "seat_a") or None)  # fmt: skip  # one call
        except EntryRefused as error:
            return text(400, str(error))
        return json_(_table_state(book, round_number, table))

    async def director_page(_request):
        return off() if book is None else file("scores.html")

    async def director_state(request):
        if book is None:
            return off()
        number = request.query_params.get("round", "")
        if not number.isdigit() or not 1 <= int(number) <= 99:
            return text(400, "round: a number from 1 to 99")
        return json_(await asyncio.to_thread(_round_state, hall, book, int(number)))

    async def director_entry(request):
        if book is None:
            return off()
        form, refused = await command_form(request)
        if refused:
            return refused
        number = _one(form, "round")
        if not number.isdigit() or not 1 <= int(number) <= 99:
            return text(400, "round: a number from 1 to 99")
        table = request.path_params["table"]
        try:
            book.enter(int(number), table, _one(form, "score_a"), _one(form, "score_b"), "director",
                       _one(form, "seat_a") or None)  # fmt: skip  # one call
        except EntryRefused as error:
            return text(400, str(error))
        scores = {
            "round": int(number),
            "table": table,
            "A": _one(form, "score_a"),
            "B": _one(form, "score_b"),
        }
        by, addr = who(request)
        await asyncio.to_thread(hall.audit.record, "score", by, addr, None, None, {"table": table}, scores)
        return json_(_table_state(book, int(number), table))

    async def link(request):
        if book is None:
            return off()
        form, refused = await command_form(request)
        if refused:
            return refused
        number = _one(form, "round")
        if not number.isdigit() or not 1 <= int(number) <= 99:
            return text(400, "round: a number from 1 to 99")
        table = request.path_params["table"]
        if not is_label(table):
            return text(400, "table: a short label")
        token = book.issue(int(number), table)
        where = f"http://{request.headers.get('host', '')}"
        return json_({side: f"{where}/S/{table}/{side}/{token}".upper() for side in "AB"})

    async def lock(request):
        if book is None:
            return off()
        form, refused = await command_form(request)
        if refused:
            return refused
        number = _one(form, "round")
        if not number.isdigit() or not 1 <= int(number) <= 99:
            return text(400, "round: a number from 1 to 99")
        book.lock_round(int(number))
        by, addr = who(request)
        await asyncio.to_thread(hall.audit.record, "lock", by, addr, None, None, None, {"round": int(number)})
        return json_({"locked": int(number)})

    return [
        Route("/S/{table}/{side}/{token}", form_page),
        Route("/s/{table}/{side}/{token}", form_page),
        Route("/api/score/{table}/{side}/{token}", form_data),
        Route("/api/score/{table}/{side}/{token}", phone_entry, methods=["POST"]),
        Route("/scores", director_page),
        Route("/api/scores", director_state),
        Route("/api/scores/{table}", director_entry, methods=["POST"]),
        Route("/api/scores/{table}/link", link, methods=["POST"]),
        Route("/api/round/lock", lock, methods=["POST"]),
    ]


def _round_state(hall, book, number):
    """The round's entries, every table named with its players where the pairings say (a paired
    table with no entry yet is listed too, `none`)."""
    state = book.state(number)
    players = hall.round_players(number)
    listed = {table["table"] for table in state["tables"]}
    state["tables"] += [
        {"table": table, "status": "none", "why": "no entry yet", "scores": None, "history": []}
        for table in players
        if table not in listed
    ]
    for table in state["tables"]:
        table.update(players.get(table["table"], {}))
    state["tables"].sort(
        key=lambda t: (0, int(t["table"]), "") if t["table"].isdigit() else (1, 0, t["table"])
    )
    return state


def _one(form, key):
    return form.get(key, [""])[0].strip()[:12]


def _table_state(book, round_number, table):
    return next((t for t in book.state(round_number)["tables"] if t["table"] == table), {"table": table})
