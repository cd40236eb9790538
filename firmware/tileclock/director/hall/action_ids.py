"""The audit trail's action ids (hall/audit.py; docs/hall.md, "The audit trail"): who asked,
the hall's run and a count, so that no id is handed out twice, and the clocks an action went to."""


def with_id(command, action_id):
    """The command line `command` sent with `by=` the action's id (the clock's answer names it)."""
    return f"{command} by={action_id}"


def targets_of(clock, targets):
    """The clocks an action to `clock` goes to: that one, `targets` for every clock's, None: all."""
    if clock == "all":
        return None if targets is None else frozenset(targets)
    return frozenset([clock])


def run_label(now_s, runs):
    """This run's part of its ids: the hall's start time, in seconds, base 36 (6 letters until
    2038), after every run on this trail already (a wall clock set back, two starts in a second),
    so no id handed out now was handed out before, in this trail or (the same page session kept
    across a new --out folder) any trail started before."""
    number = max([max(now_s, 0), *(int(run, 36) + 1 for run in runs if run)])
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not number:
            return digits


def run_of(action_id):
    """The run part of an id (`page-3f2a_t5k1ab_12`: `t5k1ab`), or None for one of another form."""
    parts = action_id.rsplit("_", 2)
    run = parts[1].lower() if len(parts) == 3 else ""
    return run if 0 < len(run) <= 7 and run.isalnum() and run.isascii() else None
