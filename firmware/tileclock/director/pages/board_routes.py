"""The director's commands to one board, and a table's history (docs/hall.md, "Calls" and "The audit trail").

    POST /api/board/CLOCK/call       call=SEQ answer=taken|done: the answer to the board's call (409
                                     when that board has no such call open: nothing sent)
    POST /api/board/CLOCK/command    action=adjust side=A|B delta_s=60|-60, action=late player=A|B|both,
                                     action=reopen, action=round_over (the director's end of
                                     this game), action=new_game (only on an ended game: the
                                     clock refuses otherwise), action=selftest (only on a
                                     fresh game, likewise), action=speech sides=A|B|AB|off once (who
                                     hears the clock: `set speech=`, at once), action=large
                                     sides=A|B|AB|off once (whose panel shows the large-digits face:
                                     `set large=`, at once): a command to that clock
    POST /api/board/CLOCK/move       to=SPARE: the dead clock CLOCK's game to the spare (hall/spare.py);
                                     400 for a `to` that is not one clock id, 409 saying why the
                                     move is refused: nothing sent nor audited
    GET  /api/board/CLOCK/history    the table's history: the director's actions on file and what
                                     the clock recorded of them

Every command is written to the audit trail (`hall/audit.py`) before it is sent, with the page
session that sent it as its `by` (the session the server holds for the browser's cookie, doors.py;
never a label the browser sends), and sent with `by=` its action's id (that session, the hall's
run and a count: `page-3f2a9c1b_t6as9s_12`), so the clock's record or refusal names that one action.
"""

import asyncio
import re

from starlette.routing import Route

from ...clock.spare import command as takeover_command
from ...wire.labels import is_count
from ...wire.protocol import is_label
from ...wire.records import SIDE_SETTINGS
from ..hall.action_ids import with_id
from ..hall.audit_read import concerns, read, table_history
from ..hall.round_control import Unsaved
from ..hall.spare import move, scene_command

#: a correction from the page: whole seconds, at most 10 minutes either way (the clock's own limit)
MAX_DELTA_S = 600
#: the most actions a table's history lists (the newest)
HISTORY = 200
_SECONDS = re.compile(r"[+-]?\d{1,4}")
#: who may hear the clock, or have large digits, as the page sends it and `set speech=`, `set large=`
#: take it (exactly: no `ba`, no `b`)
SPEECH_SIDES = ("A", "B", "AB", "off")


def who(request):
    """(by, addr): the session the server holds for the request (doors.py: its cookie's, never a
    label the browser sends; `page` for none, at this laptop's own door), and the browser's address."""
    addr = request.client.host if request.client else None
    return request.scope.get("tileclock.by", "page"), addr


def unwritten(text, error, what="not sent"):
    """The answer when the audit trail (or the round's file, `Unsaved`) cannot be written: 503,
    naming the file that failed, and nothing was done."""
    if isinstance(error, Unsaved):
        return text(503, f"{what}: {error.strerror}")
    return text(503, f"{what}: the audit trail cannot be written ({error.strerror or error})")


def one(form, key):
    """A form's field `key`, stripped and cut to 12 characters ('' when absent)."""
    return form.get(key, [""])[0].strip()[:12]


def only(form, key):
    """A form's field `key` sent exactly once, stripped and whole ('' when absent or sent twice:
    never the first of two, which a page and a proxy may read differently)."""
    given = form.get(key, [])
    return given[0].strip() if len(given) == 1 else ""


def board_of(hall, clock):
    """The page's board dict of `clock` in the feed's snapshot, or None."""
    return next((b for b in hall.feed.snapshot()["boards"] if b["clock"] == clock), None)


async def clock_form(command_form, text, request):
    """(form, clock, None) for a command from the page's own script to the clock its path names,
    or (None, None, the refusal): not the page's own (403), or no clock id (404)."""
    form, refused = await command_form(request)
    if refused:
        return None, None, refused
    clock = request.path_params["clock"]
    if not is_label(clock):
        return None, None, text(404, "no such clock")
    return form, clock, None


def act(hall, request, action, text, clock="all", changed=None):
    """`act_as` the page session `request` came from."""
    return act_as(hall, *who(request), action, text, clock, changed)


def act_as(hall, by, addr, action, text, clock="all", changed=None):
    """Write `action` to the audit trail, then send command `text` to `clock` with `by=` the
    action's id (so the clock's answer names it); the audit line (a dict). The board is read as
    the page shows it, for its table, its times before and whether it is online."""
    board = None if clock == "all" else board_of(hall, clock)
    entry = hall.audit.record(action, by, addr, text, clock, board, changed, answered=True)
    hall.feed.command(entry["command"], clock)
    return entry


async def sent(hall, request, json_, text, action, line, clock="all", changed=None):
    """`act` off the page's event loop, answered: what was sent, by whom and its action id, or
    503 when the audit trail cannot be written (then nothing was sent: no action without its line)."""
    try:
        entry = await asyncio.to_thread(act, hall, request, action, line, clock, changed)
    except OSError as error:
        return unwritten(text, error)
    return json_({"sent": entry["command"], "by": entry["by"], "id": entry["id"]})


def round_step(hall, request, step, *args):
    """`round_step_as` the page session `request` came from."""
    return round_step_as(hall, *who(request), step, *args)


def round_step_as(hall, by, addr, step, *args):
    """The round's `start` (`*args`: number, start, boards), `over` or `new_game` (`*args`: boards), audited: one audit line for
    the whole round (its number, start and boards: what changed) written before the first command
    leaves, then each command sent with `by=` that line's action id (who: `by`, from `addr`), so
    each clock's answer names it. OSError: nothing was sent; when the round's file failed after
    the line was written (`Unsaved`), the line is followed by its outcome: refused, not sent."""
    line = {}

    def record(action, command, changed, clocks):
        # the clocks heard offline as it leaves never get it: not delivered, on the trail with it
        away = [b["clock"] for b in hall.feed.snapshot()["boards"] if not b.get("online", True)]
        away = [clock for clock in away if clocks is None or clock in clocks]
        line.update(
            hall.audit.record(
                action, by, addr, command, "all", None, changed, answered=True, targets=clocks, offline=away
            )
        )

    def send(command, clock):
        hall.feed.command(with_id(command, line["id"]), clock)

    try:
        if step == "start":
            done = hall.rounds.start(*args, send=send, record=record)
        elif step == "new_game":
            done = hall.rounds.new_game(*args, send=send, record=record)
        else:
            done = hall.rounds.over(send=send, record=record)
        getattr(hall.feed, "touch", lambda: None)()  # the round panel: each board "no answer yet"
        return done
    except Unsaved as error:
        if line:
            try:
                hall.audit.outcome(line["id"], None, "refused", reason=f"not sent: {error.strerror}")
            except OSError:
                pass  # the trail refuses it too: its line then reads as never answered
        raise


def board_routes(hall, command_form, json_, text):
    """The routes above for `hall` (a `HallPage` with an `audit` trail), with the app's helpers."""

    async def answer_call(request):
        form, clock, refused = await clock_form(command_form, text, request)
        if refused:
            return refused
        seq, answer = one(form, "call"), one(form, "answer")
        if not is_count(seq) or answer not in ("taken", "done"):
            return text(400, "call: the call's seq, and answer taken or done")
        board = await asyncio.to_thread(board_of, hall, clock)
        refused = _not_open(board, clock, int(seq), answer)
        if refused:  # never audited nor sent: the page names the board whose call it answers
            return text(409, refused)
        changed = {"call": int(seq), "answer": answer}
        return await sent(hall, request, json_, text, "call", f"call {answer} {int(seq)}", clock, changed)

    async def command(request):
        form, clock, refused = await clock_form(command_form, text, request)
        if refused:
            return refused
        action = one(form, "action")
        if action == "adjust":
            side, delta = one(form, "side").upper(), one(form, "delta_s")
            if side not in ("A", "B") or not _SECONDS.fullmatch(delta):
                return text(400, "adjust: side A or B, delta_s whole seconds")
            seconds = int(delta)
            if seconds == 0 or abs(seconds) > MAX_DELTA_S:
                return text(400, "adjust: not zero, at most 10 minutes")
            line, changed = f"adjust {side} {seconds * 1000:+d}", {"side": side, "delta_ms": seconds * 1000}
        elif action == "late":
            player = one(form, "player")
            if player not in ("A", "B", "both"):
                return text(400, "late: player A, B or both")
            line, changed = f"late {player}", {"absent": player}
        elif action in SIDE_SETTINGS:  # speech, large
            sides = only(form, "sides")
            if sides not in SPEECH_SIDES:
                return text(400, f"{action}: sides A, B, AB or off (once)")
            line, changed = f"set {action}={sides}", {action: sides}
        elif action in ("reopen", "round_over", "new_game", "selftest"):
            line, changed = action.replace("_", " "), {}  # the command's words: `round over`
        else:
            return text(400, "action: adjust, late, speech, large, reopen, round_over, new_game or selftest")
        return await sent(hall, request, json_, text, action, line, clock, changed)

    moves = {}  # (dead clock, game seq) -> spare: the moves sent by this page (spare.py)

    async def move_game(request):
        """Move the game of the dead clock the path names to the spare `to` (spare.py): its
        `takeover` sent to the spare, audited as `move`; 409 saying why not."""
        form, clock, refused = await clock_form(command_form, text, request)
        if refused:
            return refused
        spare = only(form, "to")
        if not is_label(spare):  # read whole, never cut: a long id cut short may name another clock
            return text(400, "move: to, the spare clock's id (once; 1 to 32 letters, digits, - or _)")

        def check():
            boards = {b["clock"]: b for b in hall.feed.snapshot()["boards"]}
            games = {clock_id: hall.game(clock_id) for clock_id in set(boards) | {clock}}
            return move(games, boards, clock, spare, moves) + (games.get(clock),)

        taken, why, game = await asyncio.to_thread(check)
        if taken is None:  # never audited nor sent
            return text(409, why)
        scene = scene_command(game)
        if scene:  # the dead clock's round and table first: the spare's row matches the same pairing
            try:
                await asyncio.to_thread(act, hall, request, "set", scene, spare, {"from": clock})
            except OSError as error:
                return unwritten(text, error)
        changed = {"from": clock, "to": spare, "game": taken.game, "seq": taken.seq}
        answer = await sent(hall, request, json_, text, "move", takeover_command(taken), spare, changed)
        if answer.status_code == 200:  # a second move before the spare's answer is back: refused
            moves[(clock, taken.game)] = spare
        return answer

    async def history(request):
        clock = request.path_params["clock"]
        if not is_label(clock):
            return text(404, "no such clock")

        def read_it():
            board = board_of(hall, clock) or {}
            game, table, name = hall.game(clock), board.get("table"), board.get("board")
            mine = lambda entry: concerns(entry, clock, table, name)  # noqa: E731  (a one-line filter)
            entries = read(hall.feed.store.outdir, keep=mine, newest=HISTORY)
            online = board.get("online", False)
            return table_history(entries, game.records if game else [], clock, table, online, name)

        return json_(await asyncio.to_thread(read_it))

    return [
        Route("/api/board/{clock}/call", answer_call, methods=["POST"]),
        Route("/api/board/{clock}/command", command, methods=["POST"]),
        Route("/api/board/{clock}/history", history),
        Route("/api/board/{clock}/move", move_game, methods=["POST"]),
    ]


def _not_open(board, clock, seq, answer):
    """Why `answer` to call `seq` of `clock` is refused here (its board, as the page shows it, has
    no such call open, or has it taken already), or None: an answer from a page that showed a call
    since closed, or answered meanwhile from another page."""
    name = f"board {board['board']}" if board else f"clock {clock}"
    call = (board or {}).get("call")
    if call is None:
        return f"not sent: {name} has no open call"
    if call["seq"] != seq:
        return f"not sent: {name}'s open call is call {call['seq']}, not {seq}"
    if answer == "taken" and call["state"] == "taken":
        return f"not sent: {name}'s call {seq} is already taken"
    return None
