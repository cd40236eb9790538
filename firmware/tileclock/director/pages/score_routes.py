"""The score entry routes of the hall's page (docs/hall.md, "Scores at the board").

    GET  /S/TABLE/SIDE/TOKEN         the phone-sized score form of a table's game (also /s/...)
    GET  /api/score/TABLE/SIDE/TOKEN what the form shows: the table, the penalties the clock applies
    POST /api/score/TABLE/SIDE/TOKEN score_a, score_b[, seat_a]: a phone's entry for its game
    GET  /scores                     the director's page of the round's entries (hall_page/scores.html)
    GET  /api/scores?round=N         every table's entries, who made them and when, agreed or not
    POST /api/scores/TABLE           round, score_a, score_b[, seat_a]: the director's entry or correction
    POST /api/scores/TABLE/link      round[, side]: a new token for one side of the table's game (both
                                     without `side`), sent to its clock as at the game's end
                                     (`new_links`); the two phones' links
    POST /api/round/lock             round=N: no entry or correction after this
    POST /api/round/unlock           round=N: the director's entries (and the links) taken again

The link in the QR code is upper case (QR's compact alphanumeric mode), so the form answers to
`/S/` as well as `/s/`. A phone needs only its side's token, which opens that side's form alone
(side A's is 403 at B's form), and makes at most `entries.MAX_ENTRIES` entries (429 past them); an
entry is taken only once the game has ended on the clock, at that table in that round
(`score_links.not_ended`). The director's entries need the page's own script (its header and
Origin), as every command from the page does.

Every entry (the director's or a phone's, `by` `phone-TABLE-SIDE`) and every lock is on the audit
trail before anything changes, and an entry's outcome line follows it (applied, or refused with
the book's reason); a line that cannot be written is 503 and nothing changes.
"""

import asyncio
import logging

from starlette.routing import Route

from ...wire.labels import is_count, table_key
from ...wire.protocol import is_label
from ..event.entries import EntryRefused, checked
from ..event.score_links import clocks_at, not_ended
from .board_routes import one, unwritten, who

log = logging.getLogger(__name__)
#: the longest an entry's field may be as sent (`one` cuts longer ones: a score is never cut)
MAX_ENTRY_FIELD = 12


def _entry_field(form, key):
    """An entry's field `key` as sent ('' when absent), stripped; EntryRefused for one sent twice
    (the first would be taken, the rest unseen) or longer than MAX_ENTRY_FIELD, which `one` would cut to a score."""
    values = form.get(key, [])
    if len(values) > 1 or (values and len(values[0].strip()) > MAX_ENTRY_FIELD):
        raise EntryRefused(f"{key}: sent once, a whole number as written on the slip")
    return values[0].strip() if values else ""


#: the phones' routes, the only ones the players' door serves (app.py): the form, its data, an entry
PHONE_PATHS = ("/S/", "/s/", "/api/score/")


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
        if side.upper() not in ("A", "B"):
            return text(404, "not found")
        try:
            grant = book.grant_of(table, side, token)  # its own side's form, or none
        except EntryRefused as error:
            return text(403, str(error))
        facts = await asyncio.to_thread(hall.table_facts, grant.table, grant.round)
        return json_({"round": grant.round, "table": grant.table, "side": grant.side, **facts})

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
            grant = book.grant_of(table, side, token)  # `12`, or `a1` where the link says `A1`
        except EntryRefused as error:
            return text(403, str(error))  # another side's token, or none: that form is not its own
        store = getattr(hall.feed, "store", None)
        why = await asyncio.to_thread(not_ended, store, grant.round, grant.table)
        if why is not None:
            return text(409, why)
        # the phone, named by its table's link (never its token: the trail is no credential file)
        by = f"phone-{grant.table}-{grant.side}"
        by = by if is_label(by) else f"phone-{grant.side}"
        addr = request.client.host if request.client else None
        return await entered(
            form, grant.round, grant.table, f"phone {grant.side}", by, addr, spend=lambda: book.spend(token)
        )

    async def entered(form, round_number, table, who_entered, by, addr, spend=None):
        """The entry of `form` at `table`, on the audit trail first (503 and no entry if it cannot
        be written), then made (its outcome line after it): the table's state, or 400 in words.
        `spend()`, for a phone's token, counts the entry first (429 past the token's bound)."""
        try:
            score_a, score_b = _entry_field(form, "score_a"), _entry_field(form, "score_b")
            seat_a = _entry_field(form, "seat_a") or None
            checked(score_a, score_b, seat_a)  # ASCII digits, before the trail: a row must read back
        except EntryRefused as error:
            return text(400, str(error))
        if spend is not None:
            try:
                await asyncio.to_thread(spend)
            except EntryRefused as error:
                return text(429, str(error))
            except OSError as error:
                return unwritten(text, error, "not entered")
        scores = {"round": round_number, "table": table, "A": score_a, "B": score_b}
        place = {"table": table, "round": round_number}
        try:
            line = await asyncio.to_thread(
                hall.audit.record, "score", by, addr, None, None, place, scores, answered=True
            )
        except OSError as error:
            return unwritten(text, error, "not entered")
        try:  # whatever fails now, the line gets its outcome and the phone its answer
            await asyncio.to_thread(book.enter, round_number, table, score_a, score_b, who_entered, seat_a)
        except EntryRefused as error:
            await _outcome(hall, line, "refused", str(error))
            return text(400, str(error))
        except Exception as error:  # noqa: BLE001  (a disk, or a fault: said, never a 500)
            log.warning("a score entry at table %s failed: %r", table, error)
            said = f"not entered: the score book cannot take it ({getattr(error, 'strerror', None) or error})"
            await _outcome(hall, line, "refused", said)
            return text(503, said)
        await _outcome(hall, line, "applied")
        return json_(_table_state(book, round_number, table))

    async def round_and_table(request):
        """A director's form for a round's table: (form, round, table, None), or a refusal last
        (a 400 naming the field, or the form's own)."""
        form, refused = await command_form(request)
        if refused:
            return None, None, None, refused
        number, table = _round_number(one(form, "round")), request.path_params["table"]
        if number is None:
            return form, None, None, text(400, ROUND_WANTED)
        if not is_label(table):
            return form, None, None, text(400, "table: a short label")
        return form, number, table, None

    async def director_page(_request):
        return off() if book is None else file("scores.html")

    async def director_state(request):
        if book is None:
            return off()
        number = _round_number(request.query_params.get("round", ""))
        if number is None:
            return text(400, ROUND_WANTED)
        return json_(await asyncio.to_thread(_round_state, hall, book, number))

    async def director_entry(request):
        if book is None:
            return off()
        form, number, table, refused = await round_and_table(request)
        if refused:
            return refused
        return await entered(form, number, table, "director", *who(request))

    async def link(request):
        if book is None:
            return off()
        form, number, table, refused = await round_and_table(request)
        if refused:
            return refused
        side = (one(form, "side") or "").upper()
        if side not in ("", "A", "B"):
            return text(400, "side: A or B (none: both sides)")
        sides = (side,) if side else ("A", "B")
        try:
            made = await asyncio.to_thread(new_links, hall, request, number, table_key(table), sides)
        except EntryRefused as error:
            return text(400, str(error))
        except OSError as error:  # the audit trail or the tokens file: nothing was sent or changed
            return text(
                503,
                f"no new links: the disk refuses them ({error.strerror or error}); the old ones still work",
            )
        return json_(made)

    async def round_lock(request, action, apply, done, not_done):
        """Lock or unlock a round (`apply` the score book's), on the audit trail first: no lock
        or unlock without its line."""
        if book is None:
            return off()
        form, refused = await command_form(request)
        if refused:
            return refused
        number = _round_number(one(form, "round"))
        if number is None:
            return text(400, ROUND_WANTED)
        by, addr = who(request)
        try:
            await asyncio.to_thread(hall.audit.record, action, by, addr, None, None, None, {"round": number})
            await asyncio.to_thread(apply, number)
        except OSError as error:
            return unwritten(text, error, not_done)
        return json_({done: number})

    async def lock(request):
        return await round_lock(request, "lock", lambda n: book.lock_round(n), "locked", "not locked")

    async def unlock(request):
        return await round_lock(request, "unlock", lambda n: book.unlock_round(n), "unlocked", "not unlocked")

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
        Route("/api/round/unlock", unlock, methods=["POST"]),
    ]


#: what a round field must be, said when it is not
ROUND_WANTED = "round: a number from 1 to 99"


def _round_number(value):
    """A round's number from a form or query field (1 to 99), or None."""
    return int(value) if is_count(value) and 1 <= int(value) <= 99 else None


async def _outcome(hall, line, outcome, reason=None):
    """The outcome line of the entry `line`; a disk that refuses it now leaves the entry made
    (its line says it was asked; it then reads as not answered)."""
    try:
        await asyncio.to_thread(hall.audit.outcome, line["id"], None, outcome, reason=reason)
    except OSError:
        pass


#: what the audit trail shows of a token (a credential: it goes to the clock alone)
HIDDEN = "********"


def new_links(hall, request, round_number, table, sides=("A", "B")):
    """New links for `sides` of the game at `table` in `round_number`, made and sent as the hall
    sends a game's at its end: a new token for each side asked (its old one stops working; the
    other side's keeps working), and `code` with both sides' tokens to each clock whose last game
    ended there (`score_links.clocks_at`), each on the audit trail (tokens hidden) before it
    leaves. The two links and, in words, which clock was told; OSError: nothing was done."""
    links = getattr(hall, "links", None)  # a ScoreLinks where the hall sends codes (--phone-url)
    clocks = [] if links is None else clocks_at(hall.feed.store, round_number, table)
    boards = {board["clock"]: board for board in hall.feed.snapshot()["boards"]}
    by, addr = who(request)
    place = {"table": table, "round": round_number}
    changed = {**place, "sides": "".join(sides)}
    hidden = dict.fromkeys("AB", HIDDEN)
    commands = {clock: links.command(seq, table, hidden) for clock, seq in clocks}
    for clock, command in commands.items():  # no action without its line, before anything changes
        hall.audit.record("link", by, addr, command, clock, {**boards.get(clock, {}), **place}, changed)
    if not commands:
        hall.audit.record("link", by, addr, None, None, place, changed)
    for side in sides:
        hall.scores.issue(round_number, table, side)
    tokens = hall.scores.tokens_for(round_number, table)  # the side not asked keeps its own
    told = []
    for clock, seq in clocks:
        command = links.command(seq, table, tokens)
        if command is not None:
            links.send(command, clock)
            told.append(clock)
    base = links.base if links is not None else _phones_base(hall, request)
    made = {side: f"{base}/S/{table}/{side}/{tokens[side]}".upper() for side in "AB"}
    silent = [clock for clock in told if not boards.get(clock, {}).get("online", True)]
    return {**made, "new": list(sides), "told": _told(links, table, round_number, told, silent, sides)}


def _phones_base(hall, request):
    """The links' start without a --phone-url: the players' door (at the name the director's
    browser calls this laptop by, where it listens on every interface), else this door; HTTPS
    where that door speaks TLS."""
    phones = getattr(hall, "phones", None)
    if phones is None:
        return f"{request.url.scheme.upper()}://{request.headers.get('host', '')}"
    host = phones.host if phones.host not in ("0.0.0.0", "::", "") else request.url.hostname
    return f"{'HTTPS' if getattr(phones, 'tls', None) else 'HTTP'}://{host}:{phones.port}"


def _told(links, table, round_number, told, silent, sides=("A", "B")):
    """What became of the clocks' codes, for the director, in words."""
    if links is None:
        return "No clock shows a code (the hall has no --phone-url): give the players these links."
    if not told:
        return (
            f"No clock's last game ended at table {table} in round {round_number}: no clock was sent a "
            "code. Any code shown for that game before no longer works: give the players these links."
        )
    old = (
        "the old links no longer work."
        if len(sides) == 2
        else (
            f"side {sides[0]}'s old link no longer works (side {'B' if sides[0] == 'A' else 'A'}'s still does)."
        )
    )
    words = f"Sent to {', '.join(told)}: a press of A or B on the ended game shows the new code; {old}"
    if silent:
        words += f" {', '.join(silent)} is SILENT: it may not get it: give the players these links."
    return words


def _round_state(hall, book, number):
    """The round's entries, every table named with its players where the pairings say (a paired
    table with no entry yet is listed too, `none`)."""
    state = book.state(number)
    # a tokens file kept aside at the start, lines of the entries file left out: in words
    # and the pairings' problem, naming the file (the director's page only: a phone's form never)
    stale = getattr(hall.pairings, "problem", None)
    state["problem"] = " ".join(filter(None, (book.problem, state.pop("unreadable"), stale))) or None
    players = hall.round_players(number)
    listed = {table["table"] for table in state["tables"]}
    state["tables"] += [
        {"table": table, "status": "none", "why": "no entry yet", "scores": None, "history": []}
        for table in players
        if table not in listed
    ]
    for table in state["tables"]:
        table.update(players.get(table["table"], {}))
    queue = getattr(hall, "tsh_queue", None)  # --tsh-dir: where each table is in TSH's queue
    if queue is not None:
        tsh = queue.state(number)
        state["tsh_error"] = tsh["error"]
        for table in state["tables"]:
            table.update(tsh["tables"].get(f"table {table['table']}", {}))
    state["tables"].sort(
        key=lambda t: (0, int(t["table"]), "") if t["table"].isdigit() else (1, 0, t["table"])
    )
    return state


def _table_state(book, round_number, table):
    return next((t for t in book.state(round_number)["tables"] if t["table"] == table), {"table": table})
