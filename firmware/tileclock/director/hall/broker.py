"""The hall's broker config, and a private mosquitto for demos, benchmarks and tests.

`setup` writes the shipped config (`broker_conf/mosquitto.conf`), the ACL and a
password file (hashed by mosquitto's own `mosquitto_passwd`) for a real hall.
`LocalBroker` runs Debian's `mosquitto` with that same config and ACL on a free
loopback port, in a folder of its own: what the tests, `tileclock hall-demo`
and the benchmark talk to.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from ...wire.topics import ALL, DIRECTOR, VIEWERS, topic, valid_clock_id

SHIPPED = Path(__file__).with_name("broker_conf")
INSTALL_HINT = (
    "install Debian's broker: sudo apt-get install mosquitto (the demo and the tests need its binary)"
)


class BrokerError(RuntimeError):
    """The broker cannot be set up or started; the message says why and what to do."""


def mosquitto_binary():
    """The path of Debian's `mosquitto` (it lives in /usr/sbin, often off a user's PATH), or None."""
    return shutil.which("mosquitto") or next(
        (path for path in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if os.access(path, os.X_OK)),
        None,
    )


def write_passwords(path, users):
    """Write a mosquitto password file for `users` (name -> password), hashed by `mosquitto_passwd`."""
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        raise BrokerError(f"mosquitto_passwd not found: {INSTALL_HINT}")
    for name in users:
        if name not in (DIRECTOR, VIEWERS) and not valid_clock_id(name):
            raise BrokerError(f"{name!r} cannot be a clock id (letters, digits, - and _; not 'all')")
    write_private(path, "".join(f"{name}:{password}\n" for name, password in users.items()))
    subprocess.run([tool, "-U", str(path)], check=True, capture_output=True)  # hash them in place


def write_private(path, text):
    """Write `text` (passwords, keys) as the whole of `path`, readable by its owner only from the
    moment it exists: a new file created 0600 and renamed over the old one. Never written under the
    umask and chmodded after (another user could open it in between and read what comes later
    through that descriptor), nor into a file already there (its mode, and any descriptor open on
    it, would stay)."""
    path = Path(path)
    temporary = path.with_name(path.name + ".new")
    temporary.unlink(missing_ok=True)  # one a crash left: O_EXCL below wants it gone
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def acl_text(clock_ids):
    """The broker's ACL for these clocks: each clock's own topics by name, under its own `user`
    block, and the director's (docs/hall.md, "The broker"). Written out per clock rather than as
    `pattern` lines: mosquitto warns of a pattern without %u or %c, as `tileclock/all/cmd` is."""
    head = (SHIPPED / "acl").read_text(encoding="utf-8")
    blocks = [head.rstrip("\n")]
    for clock in clock_ids:
        blocks.append(
            "\n".join(
                [
                    f"user {clock}",
                    *(
                        f"topic write {topic(clock, kind)}"
                        for kind in ("records", "state", "status", "answer", "public")
                    ),
                    f"topic read {topic(clock, 'cmd')}",
                    f"topic read {topic(ALL, 'cmd')}",
                ]
            )
        )
    return "\n\n".join(blocks) + "\n"


def free_port():
    """A TCP port on the loopback address that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


#: the shipped config's lines that belong to its TLS listener
TLS_KEYS = ("certfile", "keyfile", "tls_version")
#: the line `hall_conf_text` puts a plain listener after (the TLS listener's last)
_AFTER_TLS_LISTENER = "max_connections 1000\n"


def hall_conf_text(plain_port=None):
    """The hall broker's config (tileclock.conf): TLS only on 8883, as shipped; with `plain_port`
    (`hall-setup --plain`) a listener in the clear there too, said so in the file."""
    text = (SHIPPED / "mosquitto.conf").read_text(encoding="utf-8")
    if plain_port is None:
        return text
    plain = (
        "# IN THE CLEAR, asked for with hall-setup --plain: every password, score code and command\n"
        "# on this port can be read by anyone on the Wi-Fi (doctor and the page say so)\n"
        f"listener {plain_port}\n{_AFTER_TLS_LISTENER}"
    )
    return text.replace(_AFTER_TLS_LISTENER, _AFTER_TLS_LISTENER + plain, 1)


class LocalBroker:
    """Debian's mosquitto with the hall's config and ACL, on 127.0.0.1:`port`, kept in `folder`.

    `users` (name -> password) are its accounts. Its persistence lives in the
    folder, so `restart()` keeps every session and queued message, as a hall's
    broker does across a restart. With `tls` its one listener is the shipped TLS one, with a CA
    and certificate for 127.0.0.1 and localhost (`tls.local_tls`; `ca_file`, the CA's
    certificate, is what clients check it against); `tls_port` is `port`. With `plain` as well,
    the TLS listener is on `tls_port` and `port` is one in the clear, as `hall-setup --plain`
    makes (the tests: clocks and director over TLS, their probes in the clear). Without `tls` it
    listens in the clear only; `ca_file` and `tls_port` are None.
    """

    def __init__(self, folder, users, port=None, tls=False, plain=False):
        self._place(folder, port)
        self.users = dict(users)
        self.tls = None
        self.ca_file = None
        self.tls_port = (free_port() if plain else self.port) if tls else None
        if tls:
            from .tls import BROKER_CERT, BROKER_KEY, CA_CERT, local_tls

            made = local_tls(self.folder / "tls")
            self.tls = {"certfile": made[BROKER_CERT], "keyfile": made[BROKER_KEY]}
            self.ca_file = str(made[CA_CERT])
        write_passwords(self.folder / "passwd", self.users)
        clocks = (n for n in self.users if n not in (DIRECTOR, VIEWERS))
        (self.folder / "acl").write_text(acl_text(clocks), encoding="utf-8")
        self.config = self.folder / "mosquitto.conf"
        self.config.write_text(self._config_text(), encoding="utf-8")

    def _config_text(self):
        lines = []
        both = self.tls_port not in (None, self.port)
        # the TLS listener first, then (`plain`) the one in the clear
        ports = iter([self.tls_port, self.port] if both else [self.port])
        for line in hall_conf_text(self.port if both else None).splitlines():
            key = line.split(" ", 1)[0]
            if key == "listener":
                line = f"listener {next(ports)} 127.0.0.1"
            elif key in TLS_KEYS:
                if self.tls is None:
                    continue  # a plain listener
                if key in self.tls:
                    line = f"{key} {self.tls[key]}"
            elif key == "password_file":
                line = f"password_file {self.folder / 'passwd'}"
            elif key == "acl_file":
                line = f"acl_file {self.folder / 'acl'}"
            lines.append(line)
        lines += [
            f"persistence_location {self.folder}/",
            f"log_dest file {self.folder / 'mosquitto.log'}",
            # started as root, mosquitto drops to user mosquitto, who cannot write this folder
            "user root" if os.geteuid() == 0 else "",
        ]
        return "\n".join(lines) + "\n"

    def _place(self, folder, port):
        """The mosquitto to run, its folder (made) and its port: what every broker here starts from."""
        self.binary = mosquitto_binary()
        if self.binary is None:
            raise BrokerError(f"mosquitto not found: {INSTALL_HINT}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.process = None

    def start(self, timeout_s=10.0):
        """Start the broker and wait until it takes connections."""
        # a process group of its own: a Ctrl-C at the terminal reaches this program, which stops the
        # broker last (its clocks say `offline` to it first, at once), not the broker before them
        self.process = subprocess.Popen(
            [self.binary, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerError(
                    f"mosquitto exited ({self.process.returncode}); see {self.folder / 'mosquitto.log'}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.ready_port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise BrokerError(f"mosquitto did not listen on port {self.port} within {timeout_s} s")

    @property
    def ready_port(self):
        """The port its start waits for."""
        return self.port

    def stop(self, kill=False):
        """Stop the broker: SIGTERM saves its persistence first; `kill` is a crash (SIGKILL)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self):
        """Stop and start again on the same port, with the same persistence."""
        self.stop()
        return self.start()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
