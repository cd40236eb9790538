"""What each board did with the newest command to several boards (a round's start, round over, a
new game on every board), board by board, as each answer comes (docs/hall.md, "Round control").

The audit trail (`audit.py`) keeps the answers (`AuditLog.answers_to`) as the clocks' records
reach the hall; `answered` puts them beside the boards as the page shows them, so the round panel
says of each board: applied, refused (with the clock's reason), not delivered, no answer yet, or
offline. `before_a_round` names the boards that cannot start a timed round now.
"""

from .audit_read import OFFLINE
from .board import board_order

#: what a refusal means for the director, and what fixes it (the clock's words, `requests.py`)
FIXES = (
    (
        "only on a fresh game",
        "its game has begun or ended: open a new game on it, then start the round there",
    ),
    (
        "does not know the time of day",
        "its clock's time is not synchronised: wait for its Wi-Fi and the laptop's time server "
        "(tileclock doctor on the board), then start the round there",
    ),
    (
        "not synchronised",
        "its clock's time is not synchronised: wait for it to reach the laptop's time server",
    ),
)


def fix_for(reason):
    """What fixes the refusal `reason` (a clock's words), or None when nothing is known of it."""
    return next((fix for words, fix in FIXES if words in (reason or "")), None)


def what_of(line):
    """The command of an audit line to several boards, in words ("round 5's start at 14:00:00")."""
    changed = line.get("changed") or {}
    if line["action"] == "round_start":
        return f"round {changed.get('round')}'s start at {changed.get('start')}"
    if line["action"] == "round_over":
        return f"round over{' (round ' + str(changed['round']) + ')' if changed.get('round') else ''}"
    return "new game"


def answered(line, answers, boards):
    """The newest command to several boards (`line`, its audit line, or None), and what each board
    it went to did (`answers`: `AuditLog.answers_to` its id; `boards`: the snapshot's), in board
    order; None when no such command was sent. JSON-ready."""
    if line is None:
        return None
    targets = line.get("targets")
    names = (line.get("changed") or {}).get("boards")
    if targets is not None:
        mine = [b for b in boards if b["clock"] in targets]
    elif isinstance(names, list):  # read back after a restart: the boards it named
        mine = [b for b in boards if str(b["board"]) in map(str, names)]
    else:  # to every clock (round over)
        mine = list(boards)
    whole = answers.get(None)  # the hall's own refusal: never sent (round.json)
    said = []
    for board in sorted(mine, key=lambda b: (board_order(b["board"]), b["clock"])):
        answer = whole or answers.get(board["clock"])
        if answer is None:
            state, reason = ("no answer yet", None) if board.get("online", True) else ("offline", None)
        elif answer["outcome"] == "not_delivered":
            state = "offline" if answer.get("reason") == OFFLINE else "not delivered"
            reason = answer.get("reason")
        else:
            state, reason = answer["outcome"], answer.get("reason")
        said.append({"board": board["board"], "clock": board["clock"], "state": state, "reason": reason})
    counts = {}
    for item in said:
        counts[item["state"]] = counts.get(item["state"], 0) + 1
    refused = [item for item in said if item["state"] == "refused"]
    return {
        "id": line["id"],
        "action": line["action"],
        "what": what_of(line),
        "at": line.get("at"),
        "round": (line.get("changed") or {}).get("round"),
        "boards": said,
        "counts": counts,
        "fixes": sorted({fix for item in refused if (fix := fix_for(item["reason"]))}),
    }


def before_a_round(boards):
    """The boards that cannot start a timed round as they are now, each with why: a game begun or
    ended (a new game first), a clock whose time is not synchronised; and the boards whose clocks
    send no time figures (their time is not known here). JSON-ready."""
    cannot, unknown = [], []
    for board in sorted(boards, key=lambda b: (board_order(b["board"]), b["clock"])):
        if not board.get("online", True):
            continue
        why = []
        if board.get("state") in ("running", "paused", "ended"):
            why.append("its game has begun or ended: new game first")
        time = board.get("time")
        if isinstance(time, dict) and time.get("synced") is False:
            why.append("its clock's time is not synchronised")
        if why:
            cannot.append({"board": board["board"], "clock": board["clock"], "why": "; ".join(why)})
        if not isinstance(time, dict):
            unknown.append(board["board"])
    return {"cannot": cannot, "no_time_figures": unknown}
