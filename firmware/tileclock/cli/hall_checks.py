"""`tileclock hall`'s arguments read and checked before anything runs: the director's password,
the clocks' keys and the broker's CA, the page's password, the pairings and the round, the phones'
address, and a broker someone answers for. Each mistake is a UsageError naming its option; the
hall itself is opened and run by hall.py."""

import getpass
import os
import socket
import ssl
import sys

from ..director.hall.plan import PlanError, read_plan
from ..wire.seal import read_keys
from .errors import UsageError, given_by_the_user, why

#: the broker's ports: hall-setup's listens with TLS on `TLS_PORT` only (`--plain` adds `PLAIN_PORT`)
TLS_PORT, PLAIN_PORT = 8883, 1883


def ca_beside_keys(keys_path):
    """hall-setup's CA (`tileclock-ca.pem`) in the folder of `--keys` `keys_path`, where it
    writes both, or None: with it, `tileclock hall --keys DIR/tileclock.keys` speaks TLS to the
    broker hall-setup made without being told (`--port` given, or `--tls-ca`, wins)."""
    if not keys_path:
        return None
    beside = os.path.join(os.path.dirname(keys_path), "tileclock-ca.pem")
    return beside if os.path.isfile(beside) else None


#: `--plain-http`'s words, and the doors each serves in the clear
PLAIN_DOORS = {"players": ("players",), "director": ("director",), "both": ("director", "players")}


def page_tls(folder, tls_ca=None, keys=None, plain=None):
    """The page's HTTPS: ((certificate, key) or None, the doors served in plain HTTP). hall-setup's
    `tileclock-page.pem` and `.key` in `--page-tls` `folder`, else beside `--tls-ca` or `--keys`
    (hall-setup writes them all in one folder). A door in the clear only where `--plain-http`
    `plain` names it; with none found and a door to serve over HTTPS, a UsageError saying what to
    give."""
    from ..director.hall.tls import PAGE_CERT, PAGE_KEY

    doors = PLAIN_DOORS.get(plain, ())
    if len(doors) == 2:  # both in the clear: no certificate needed
        return None, doors
    places = [folder] if folder else [os.path.dirname(path) or "." for path in (tls_ca, keys) if path]
    for place in places:
        cert, key = os.path.join(place, PAGE_CERT), os.path.join(place, PAGE_KEY)
        if os.path.isfile(cert) and os.path.isfile(key):
            return (cert, key), doors
    if folder:
        raise UsageError(
            f"--page-tls {folder}: no {PAGE_CERT} and {PAGE_KEY} there (hall-setup writes them beside "
            f"tileclock-ca.pem; for a folder older than the page's HTTPS: tileclock hall-setup {folder} --page-cert)"
        )
    if places:  # hall-setup's folder, from before the page's HTTPS
        raise UsageError(
            f"no {PAGE_CERT} in {places[0]}, beside the hall's CA: tileclock hall-setup {places[0]} --page-cert "
            "makes it from that CA (or --plain-http both: the page in the clear, readable on the Wi-Fi)"
        )
    raise UsageError(
        f"the page speaks HTTPS with hall-setup's {PAGE_CERT}: give --page-tls DIR (hall-setup's folder), "
        "or --plain-http both to serve it in the clear (phone links, scores and the director's "
        "login readable on the Wi-Fi)"
    )


def read_keys_option(path):
    """The clocks' command keys in `--keys` `path` (hall-setup's tileclock.keys), or None without
    one; a UsageError naming the option if the file cannot be read as keys."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            return read_keys(file.read())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"--keys {path}: {why(error)}") from None


def page_password(path):
    """The page's password hash in `path` (hall-setup's tileclock-page.passwd), or None without
    one; a UsageError naming --page-password-file if it is not such a file."""
    if not path:
        return None
    from ..director.hall.page_password import is_password_hash

    try:
        with open(path, encoding="utf-8") as file:
            text = file.read(4097)  # one line of under 700 bytes; more is no such file
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--page-password-file {path}: {why(error)}") from None
    text = text.strip() if len(text) <= 4096 else ""
    if not is_password_hash(text):
        raise UsageError(
            f"--page-password-file {path}: not a page password file (tileclock hall-setup writes one)"
        )
    return text


#: where `tileclock hall` finds the director's password when no file is given
PASSWORD_VARIABLE = "TILECLOCK_HALL_PASSWORD"


def director_password(args, environ=os.environ, stdin=sys.stdin, ask=getpass.getpass):
    """The director's password from --password-file, else $TILECLOCK_HALL_PASSWORD, else asked for
    (`--password` alone, on a terminal). Never from the command line, where every user of the machine
    reads it (/proc/PID/cmdline): `--password VALUE` still works, with a warning."""
    if args.password_file:
        try:
            with open(args.password_file, encoding="utf-8") as file:
                return file.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--password-file {args.password_file}: {why(error)}") from None
    if args.password is True:  # `--password` alone: ask
        if not stdin.isatty():
            raise UsageError(
                f"--password: no terminal to ask on: use --password-file FILE or ${PASSWORD_VARIABLE}"
            )
        return ask("the director's password on the broker: ")
    if args.password is not None:
        print(
            "tileclock: warning: a password on the command line is visible to every user of this machine "
            f"(ps, /proc): use --password-file FILE, ${PASSWORD_VARIABLE}, or --password alone to be asked",
            file=sys.stderr,
        )
        return args.password
    return environ.get(PASSWORD_VARIABLE)


def hall_pairings(tsh=None, tsh_config=None, csv=None, tables=None):
    """The pairings `--tsh`, `--config` or `--pairings` name (with `--tables`), for the players'
    names on the score forms, or None; a UsageError naming the option if they cannot be read."""
    if not (tsh or tsh_config or csv):
        if tables:
            raise UsageError("--tables: give the pairings too (--tsh FILES or --config config.tsh)")
        return None
    from ..director.event.hall_pairings import HallPairings

    option = "--tsh" if tsh else "--config" if tsh_config else "--pairings"
    try:
        return HallPairings(tsh, tsh_config, csv, tables)
    except OSError as error:
        raise UsageError(f"{option}: {error.filename or ''}: {why(error)}") from None
    except ValueError as error:
        raise UsageError(f"{option}: {error}") from None


def hall_round(pairings, given):
    """The director's `--round` `given`, checked against the round TSH is on (from the pairings
    just read: a UsageError with both numbers for a round TSH has not reached), or None."""
    on = pairings.next_round if pairings is not None else None
    if given is not None and on is not None and given > on:
        raise UsageError(
            f"--round {given}, but TSH's .t files are on round {on}: give --round {on}, "
            "or leave it out to take TSH's round"
        )
    return given


def phone_url(given, host, port, tls=True):
    """The address phones reach the page by (the start of the score links): `--phone-url` `given`,
    else the players' door's own address `host`:`port` when it is one a phone can reach (not
    loopback, not every interface), `https://` where it speaks TLS (`tls`)."""
    if given:
        from ..director.event.score_links import phone_base

        with given_by_the_user():
            phone_base(given)  # its words name --phone-url, before anything runs
        return given.rstrip("/")
    if host and host not in ("0.0.0.0", "::", "localhost") and not host.startswith("127."):
        return f"{'https' if tls else 'http'}://{host}:{port}"
    return None


def reach(host, port, tls_ca=None, timeout_s=5.0, guessed_plain=False):
    """Refuse (UsageError naming --broker and --port) a broker nobody answers for: a host name that
    does not resolve, a port nothing listens on; with `tls_ca`, one whose certificate that CA did
    not sign (or for another name) or that speaks no TLS there (--tls-ca). `guessed_plain`: the
    port is the plain one for want of --tls-ca and --port, and nothing there is said as hall-setup's
    broker, TLS only, asking for --tls-ca (never for hall-setup --plain). Once running, a broker
    gone away is waited for."""
    try:
        connection = socket.create_connection((host, port), timeout=timeout_s)
        with connection:
            if tls_ca:
                _handshake(connection, host, port, tls_ca)
    except socket.gaierror as error:
        raise UsageError(f"--broker {host}: no such host ({error.strerror})") from None
    except ConnectionRefusedError:
        if guessed_plain:
            raise UsageError(
                f"--broker {host} --port {port} (the default without --tls-ca): nothing answers there; "
                f"hall-setup's broker listens with TLS only, on {TLS_PORT}: give --tls-ca DIR/tileclock-ca.pem"
            ) from None
        raise UsageError(
            f"--broker {host} --port {port}: nothing answers there (is mosquitto running there, on that port?)"
        ) from None
    except OSError as error:
        raise UsageError(f"--broker {host} --port {port}: {why(error)}") from None


def _handshake(connection, host, port, tls_ca):
    """A TLS handshake on `connection` checked against `tls_ca`, as the feed's own will be; a
    UsageError naming --tls-ca (or --port) if it fails."""
    try:
        context = ssl.create_default_context(cafile=tls_ca)
    except (OSError, ssl.SSLError) as error:
        raise UsageError(f"--tls-ca {tls_ca}: not a CA certificate ({why(error)})") from None
    try:
        context.wrap_socket(connection, server_hostname=host).close()
    except ssl.SSLCertVerificationError as error:
        raise UsageError(
            f"--tls-ca {tls_ca}: the broker at {host}:{port} has a certificate this CA did not sign, or "
            f"not for {host} ({error.verify_message}): hall-setup's tileclock-ca.pem, and a name it wrote it for"
        ) from None
    except (ssl.SSLError, ConnectionError) as error:
        raise UsageError(
            f"--broker {host} --port {port}: no TLS there ({why(error)}): hall-setup's broker has it on 8883"
        ) from None


def room_plan(path):
    """`--plan FILE`'s places ({board: [row, column]}, director/hall/plan.py), or None without
    it; a file that is no plan is a UsageError naming --plan, the line and why."""
    if path is None:
        return None
    try:
        return read_plan(path)
    except PlanError as error:
        raise UsageError(f"--plan {error}") from None
