"""The figures of `tileclock bench` (`KEYS`), their targets, and the table that shows them."""

import operator

KEYS = (
    "exact_max_error_ns",
    "wrong_penalty_pct",
    "wakeups_per_s",
    "cpu_percent",
    "press_to_record_p99_ms",
    "press_to_frame_p99_ms",
    "press_to_turn_shown_p99_ms",
    "press_to_panel_p99_ms",
    "bus_ms_per_switch",
    "bus_bytes_per_tick",
    "bus_bytes_per_switch",
    "startup_s",
    "boot_to_clock_s",
    "rss_mb",
    "startup_s_1000_games",
    "rss_mb_1000_games",
    "export_rss_mb_1000_games",
    "replay_rss_mb_1000_games",
    "takeover_s",
    "takeover_rss_mb",
    "flood_rss_mb",
    "flood_press_to_line_max_ms",
)

#: (comparison, target) for each figure that has one.
TARGETS = {
    "exact_max_error_ns": ("==", 0),
    "wrong_penalty_pct": ("==", 0),
    "wakeups_per_s": ("<=", 1.1),
    "cpu_percent": ("<", 0.5),
    "press_to_turn_shown_p99_ms": ("<", 10),
    "press_to_panel_p99_ms": ("<", 25),
    "startup_s": ("<", 0.5),
    "rss_mb": ("<", 45),
    "export_rss_mb_1000_games": ("<", 60),
    "replay_rss_mb_1000_games": ("<", 60),
    "takeover_rss_mb": ("<", 60),
    "flood_rss_mb": ("<", 100),
    "flood_press_to_line_max_ms": ("<", 100),
}

#: Figures whose target is relative: at most this many times another figure of the same run.
RELATIVE_TARGETS = {
    "startup_s_1000_games": ("startup_s_0_games", 1.10),
    "rss_mb_1000_games": ("rss_mb_0_games", 1.10),
}


_COMPARISONS = {"==": operator.eq, "<=": operator.le, "<": operator.lt, ">=": operator.ge}


def verdict(key, value, targets=TARGETS, figures=None):
    """'met', 'MISSED', or '' for a figure without a target (or whose reference is not in `figures`)."""
    if key in RELATIVE_TARGETS and figures and value is not None:
        reference, factor = RELATIVE_TARGETS[key]
        if figures.get(reference):
            return "met" if value <= factor * figures[reference] else "MISSED"
    if key not in targets or value is None:
        return ""
    comparison, target = targets[key]
    return "met" if _COMPARISONS[comparison](value, target) else "MISSED"


def target_text(key):
    """A figure's target as the table shows it (`< 10`, `<= 1.1x` of another figure), or ''."""
    if key in RELATIVE_TARGETS:
        return f"<= {RELATIVE_TARGETS[key][1]}x {RELATIVE_TARGETS[key][0]}"
    return " ".join(map(str, TARGETS[key])) if key in TARGETS else ""


def targets(figures):
    """Every figure that has a target: the target and whether this run met it (None: not measured)."""
    found = {}
    for key in KEYS:
        if key in TARGETS or key in RELATIVE_TARGETS:
            met = verdict(key, figures.get(key), figures=figures)
            found[key] = {"target": target_text(key), "met": {"met": True, "MISSED": False}.get(met)}
    return found


def _shown(value, digits=3):
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def _runs(values):
    return "/".join(f"{value:.3g}" for value in values or [])


def beside(key, figures):
    """What the usual way gives for the same figure, in the same run."""
    f = figures.get
    none, one = f(key.replace("1000_games", "0_games")), f(key.replace("1000_games", "1_game"))
    if key in ("startup_s_1000_games", "rss_mb_1000_games") and f(key) and none and one:
        return (
            f"no history {_shown(none)} ({_shown(100 * (f(key) / none - 1), 1)} %), "
            f"one game {_shown(one)} ({_shown(100 * (f(key) / one - 1), 1)} %); medians of "
            f"{len(f(key + '_runs') or [])} starts, each: {_runs(f(key + '_runs'))} against "
            f"{_runs(f(key.replace('1000_games', '0_games') + '_runs'))}"
        )
    if key == "boot_to_clock_s" and f("boot_bus_ms") is not None:
        return f"READY=1 after {_shown(f('startup_s'), 3)} s + the panels' start-up on the bus {_shown(f('boot_bus_ms'), 1)} ms"
    if key == "takeover_s" and f("takeover_mb"):
        return f"a 300-game single-file journal of {_shown(f('takeover_mb'), 0)} MB; READY=1 after it"
    if key == "flood_press_to_line_max_ms" and f("flood_presses_timed"):
        return (
            f"{f('flood_presses_timed')} presses; {f('flood_lines_resent'):,} lines resent for 500 requests"
        )
    if key == "exact_max_error_ns" and f("tick_median_error_ms") is not None:
        return f"1 s ticking clock: median {_shown(f('tick_median_error_ms') / 1000, 2)} s, worst {_shown(f('tick_max_error_ms') / 1000, 2)} s"
    if key == "wrong_penalty_pct" and f("tick_wrong_penalty_pct") is not None:
        return f"1 s ticking clock: {_shown(f('tick_wrong_penalty_pct'), 1)} % of {f('overtime_games'):,} overtime games"
    if key == "wakeups_per_s" and f("poll_wakeups_per_s") is not None:
        split = ""
        if f("loop_wakeups_per_s") is not None:
            split = (
                f"loop {_shown(f('loop_wakeups_per_s'), 2)} + disk waits in {_shown(f('fsyncs_per_s'), 2)} fsyncs "
                f"{_shown(f('disk_waits_per_s'), 2)} + other threads {_shown(f('other_threads_wakeups_per_s'), 2)}; "
            )
        return f"{split}lgpio-style poll: {_shown(f('poll_wakeups_per_s'), 0)}"
    if key == "cpu_percent" and f("poll_cpu_percent") is not None:
        return f"lgpio-style poll: {_shown(f('poll_cpu_percent'), 2)}"
    if key == "press_to_turn_shown_p99_ms" and f("turn_bus_ms_per_switch") is not None and f("i2c_hz"):
        return f"of which bus {_shown(f('turn_bus_ms_per_switch'), 2)} ms; median {_shown(f('press_to_turn_shown_median_ms'), 1)} ms"
    if key == "press_to_panel_p99_ms" and f("bus_ms_per_switch") is not None and f("i2c_hz"):
        return f"of which bus {_shown(f('bus_ms_per_switch'), 1)} ms at {f('i2c_hz') // 1000} kHz"
    if key in ("bus_bytes_per_tick", "bus_bytes_per_switch"):
        kind = key.rsplit("_", 1)[1]
        if f(f"bus_floor_bytes_per_{kind}") is not None:
            return f"floor {_shown(f(f'bus_floor_bytes_per_{kind}'), 1)}, luma stock {_shown(f(f'bus_stock_bytes_per_{kind}'), 0)}"
    return ""


def table(figures):
    """The figures as a plain-text table: value, the usual way beside it, the target, met or missed."""
    lines = [f"{'figure':24} {'value':>11}  {'target':9} {'':6}  beside it"]
    for key in KEYS:
        value = figures.get(key)
        target = " ".join(map(str, TARGETS[key])) if key in TARGETS else ""
        if key in RELATIVE_TARGETS:
            target = f"<= {RELATIVE_TARGETS[key][1]}x"
        lines.append(
            f"{key:24} {_shown(value):>11}  {target:9} {verdict(key, value, figures=figures):6}  {beside(key, figures)}"
        )
    return "\n".join(lines)
