"""`tileclock doctor`: checks the machine the clock runs on, and says what is wrong and how to fix it.

Every check reads; none changes anything. Panels are probed with a one-byte
I2C read (as i2cdetect does), so a running clock's screens are not disturbed.
"""

from . import pi
from .checks import FAIL, OK, WARN, Check
from .host import (
    SERVICE_USER,
    check_buttons,
    check_config,
    check_hall_tls,
    check_serial,
    check_service,
    check_state_dir,
    check_wall_clock,
)
from .panels import check_panels
from .power import check_power
from .speech import check_speech

__all__ = ["FAIL", "OK", "WARN", "Check", "report", "run_checks"]


def run_checks(config_path, state_dir, smbus=None, service_user=None, root="/"):
    """Every check, in the order a builder would fix things. `service_user`: the user the service
    runs as (default SERVICE_USER); `root`: where the Pi's own files are read (boot config, model)."""
    config, first = check_config(config_path)
    checks = [first]
    if config is None:
        return checks
    checks.append(pi.check_config_mode(config_path, config))
    checks.append(pi.check_clock_id(config, state_dir, root))
    checks += pi.check_boot(config, root)
    on_pi = bool(pi.pi_model(root))
    if on_pi:
        checks.append(pi.check_core_clock())
    checks.append(check_power(root if config.power_root == "/" else config.power_root, on_pi))
    checks += check_buttons(config)
    checks += check_panels(config, smbus)
    checks.append(check_serial(config))
    checks += check_state_dir(state_dir, service_user or SERVICE_USER)
    checks.append(check_service())
    checks.append(check_wall_clock(hall=config.hall is not None, root=root))
    checks.append(check_hall_tls(config))
    checks.append(check_speech(config, root))
    return [check for check in checks if check is not None]


def report(checks):
    """The checks as text: a line each, and how to fix what failed."""
    lines = []
    for check in checks:
        lines.append(f"{check.status:4}  {check.what}: {check.seen}")
        if check.fix and check.status != OK:
            lines.append(f"      fix: {check.fix}")
    failed = sum(check.status == FAIL for check in checks)
    lines.append(f"{failed} problem(s) found" if failed else "no problems found")
    return "\n".join(lines)
