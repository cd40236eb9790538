"""A fake of the Pi's power monitors in sysfs, as strict as the kernel's (device/power.py).

The tree is real files under a test's folder (`root`, what `[clock] power_root` names), so a
missing file is the kernel's ENOENT and a glob finds what is there; what a folder cannot do, the
fake's `open` (put in place of the power module's) does as sysfs does:

- every value reads with its trailing newline (`50005\n`, `1\n`), as `sprintf("%x\n")` gives it;
- the attributes are read-only (0444, no `store`): opening one to write is EACCES, even for root
  (kernfs refuses a write open of a file with no write method);
- a read can fail where the real one can: `fail(path, errno.EIO)` (an older kernel's
  `get_throttled` asks the firmware's mailbox at each read, and passes its error on), EINVAL.
"""

import builtins
import errno
import os

from tileclock.device import power

HWMON = "sys/class/hwmon"
FIRMWARE = "sys/devices/platform/soc/soc:firmware"


class FakeSysfs:
    """A sysfs tree under `root` with the files a Pi's kernel has for its supply; `install` it
    (with pytest's `monkeypatch`) before reading."""

    def __init__(self, root):
        self.root = str(root)
        self._fails = {}  # path -> errno of every read
        self.writes_refused = 0

    def hwmon(self, alarm=0, number=0, name="rpi_volt"):
        """A hwmon device (`hwmonN/name`, `in0_lcrit_alarm`); another `name` is another sensor."""
        folder = os.path.join(self.root, HWMON, f"hwmon{number}")
        os.makedirs(folder, exist_ok=True)
        self._put(os.path.join(folder, "name"), f"{name}\n")
        if name == "rpi_volt":
            self.set_alarm(alarm, number)
        return folder

    def set_alarm(self, alarm, number=0):
        self._put(os.path.join(self.root, HWMON, f"hwmon{number}", "in0_lcrit_alarm"), f"{int(alarm)}\n")

    def firmware(self, flags=0):
        """The firmware's `get_throttled` with `flags`."""
        os.makedirs(os.path.join(self.root, FIRMWARE), exist_ok=True)
        self.set_flags(flags)
        return self.firmware_path

    @property
    def firmware_path(self):
        return os.path.join(self.root, FIRMWARE, "get_throttled")

    def set_flags(self, flags):
        self._put(self.firmware_path, f"{flags:x}\n")

    def fail(self, path, code):
        """Every read of `path` fails with `code` (errno.EIO, errno.EINVAL) until `heal`."""
        self._fails[os.path.realpath(path)] = code

    def heal(self, path):
        self._fails.pop(os.path.realpath(path), None)

    def _put(self, path, text):
        if os.path.exists(path):
            os.chmod(path, 0o644)
        with builtins.open(path, "w", encoding="ascii") as file:
            file.write(text)
        os.chmod(path, 0o444)

    def open(self, path, mode="r", *args, **kwargs):
        """`open` as sysfs answers it, for paths under the tree; anything else as usual."""
        real = os.path.realpath(path)
        if real.startswith(os.path.realpath(self.root) + os.sep):
            if any(letter in mode for letter in "wax+"):
                self.writes_refused += 1
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
            code = self._fails.get(real)
            if code is not None:
                raise OSError(code, os.strerror(code), path)
        return builtins.open(path, mode, *args, **kwargs)

    def install(self, monkeypatch):
        """Have the power module read through this fake."""
        monkeypatch.setattr(power, "open", self.open, raising=False)
        return self
