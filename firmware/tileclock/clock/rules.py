"""Rule profiles: what each rulebook asks of the clock, as data.

The core reads every limit, rate and cap from a `Rules` value; nothing about a
particular rulebook is written as a branch in the clock itself.
"""

from dataclasses import dataclass, fields, replace

from .timecode import NS_PER_S


@dataclass(frozen=True)
class Rules:
    """One rulebook's clock rules. Times are whole seconds."""

    name: str
    #: Starting time of each side (NASPA III.A.3, NSA VIII.A, school rule 19).
    time_s: int = 25 * 60
    #: Points deducted for each started overtime step (NASPA V.G.2, NSA VIII.C).
    overtime_points: int = 10
    overtime_step_s: int = 60
    #: The game ends when a side's overtime exceeds this (NASPA V.G.3); None: no cap.
    overtime_cap_s: int | None = None
    #: What the side that passed the cap loses, in place of its overtime penalty.
    cap_deduction: int = 100
    #: A late side whose clock reaches -0:01 before it arrives forfeits (NASPA III.C).
    late_forfeit_at_overtime: bool = False
    #: Points a late side loses for each whole interval it is absent (school rule 25).
    late_points: int = 0
    late_interval_s: int | None = None
    #: A late side that has not arrived after this long forfeits (school rule 25).
    late_forfeit_after_s: int | None = None
    #: Whether an absent side's game clock runs while it is absent (NASPA III.C); when not, absence
    #: costs points only and the panels count it up (school rule 25).
    absence_runs_clock: bool = True
    #: The game ends this long after the round's start (school rule 21); None: no round limit.
    round_limit_s: int | None = None
    #: The panels show the round time left in its last this-many seconds.
    round_warning_s: int = 10 * 60
    #: The most one correction may move a side, and the range a side's limit must stay in.
    max_correction_s: int = 10 * 60
    max_limit_s: int = 99 * 60 + 59

    def overtime_penalty(self, over_s):
        """Penalty for `over_s` whole seconds of overtime: a step for each minute or part of one."""
        if over_s <= 0:
            return 0
        steps = -(-over_s // self.overtime_step_s)
        return self.overtime_points * steps

    def changes(self):
        """The settings in which these rules differ from their named profile (as a `new_game` records them)."""
        base = PROFILES.get(self.name)
        if base is None:
            return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "name"}
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(base, f.name)
        }

    def late_penalty(self, absent_ns):
        """Penalty for having been absent `absent_ns`: one step per completed interval."""
        if not self.late_interval_s:
            return 0
        return self.late_points * (absent_ns // (self.late_interval_s * NS_PER_S))


PROFILES = {
    "naspa": Rules(
        name="naspa",
        overtime_cap_s=10 * 60,
        cap_deduction=100,
        late_forfeit_at_overtime=True,
    ),
    "nsa1997": Rules(name="nsa1997"),
    "school": Rules(
        name="school",
        late_points=10,
        late_interval_s=3 * 60,
        late_forfeit_after_s=15 * 60,
        absence_runs_clock=False,
        round_limit_s=50 * 60,
    ),
}

DEFAULT_PROFILE = "naspa"


def profile(name, changes=None):
    """The rule profile called `name`, with `changes` (setting -> value) if given; ValueError says
    what is unknown."""
    try:
        rules = PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown rules profile {name!r} (known: {known})") from None
    if changes:
        unknown = set(changes) - {f.name for f in fields(Rules)} | ({"name"} & set(changes))
        if unknown:
            raise ValueError(f"unknown rules settings {sorted(unknown)}")
        rules = replace(rules, **changes)
    return rules
