"""What a table's score form tells the players: the penalties the clock will apply, in words.

The phone form asks for the scores as written on the slip (before any penalty) and says what the
director's tools will then take off, so nobody takes a penalty off twice.
"""

from ...wire.records import SIDES
from ..records.facts import game_facts


def penalties_in_words(records):
    """Lines for the form, from the game's records (None or [] when none has reached the hall)."""
    if not records:
        return [
            "No game from this table's clock has reached the hall yet: the director applies its penalties."
        ]
    facts = game_facts(records)
    lines = []
    if not facts.ended:
        lines.append("The game has not ended on the clock: these are its figures so far.")
    player, reason = facts.forfeit or (None, None)
    if reason == "absent":
        who = "Both sides" if player == "both" else f"Side {player}"
        return lines + [
            f"{who} did not arrive in time: a forfeit, no scores needed (the director enters it)."
        ]
    for side in SIDES:
        figures = facts.sides[side]
        if side == player and reason == "overtime_limit":
            lines.append(
                f"Side {side} passed 10 minutes of overtime and loses: {figures.total_pen} off its score "
                "(NASPA V.G.3); if it still leads, the other side's score is raised to win by one."
            )
            continue
        parts = []
        if figures.overtime_pen:
            parts.append(f"{figures.overtime_pen} for overtime ({figures.shown})")
        if figures.late_pen:
            parts.append(f"{figures.late_pen} for lateness")
        lines.append(
            f"Side {side}: " + (" and ".join(parts) + " off its score." if parts else "no time penalty.")
        )
    return lines
