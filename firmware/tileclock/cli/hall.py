"""`tileclock hall` as a command: its arguments checked, then the feed, the page and any serial
ports run until interrupted (the feed itself is director/hall/feed.py)."""

import getpass
import os
import socket
import ssl
import sys
from urllib.parse import urlsplit

from ..director.hall.feed import HallFeed
from ..wire.seal import read_keys
from .errors import UsageError, given_by_the_user

#: the broker's ports: hall-setup's listens with TLS on `TLS_PORT` only (`--plain` adds `PLAIN_PORT`)
TLS_PORT, PLAIN_PORT = 8883, 1883


def run_hall(args, out, draw_panel=None):
    """`tileclock hall`: the broker's records (and any serial ports') into one store, and the page
    (`draw_panel`: see `HallPage`). A mistake in its arguments (a file, a port, a broker nobody
    answers for, a refused password) is a UsageError naming the argument, before anything runs."""
    from ..director.follow.port import check_port

    password = director_password(args)
    if not args.tls_ca and args.port is None:
        args.tls_ca = ca_beside_keys(args.keys)  # hall-setup's folder: its broker speaks TLS only
    guessed_plain = args.port is None and not args.tls_ca  # no TLS asked, no port: hall-setup's has none
    if args.port is None:  # hall-setup's broker listens with TLS on 8883 (docs/hall.md)
        args.port = TLS_PORT if args.tls_ca else PLAIN_PORT
    if args.tls_ca and not os.path.isfile(args.tls_ca):
        raise UsageError(
            f"--tls-ca {args.tls_ca}: {'a folder' if os.path.isdir(args.tls_ca) else 'no such file'}"
        )
    keys = read_keys_option(args.keys)
    for port in args.serial or []:
        with given_by_the_user():
            check_port(port)
    tsh_dir = getattr(args, "tsh_dir", None)  # TSH's folder: its config.tsh, and its queue
    config = os.path.join(tsh_dir, "config.tsh") if tsh_dir else args.tsh_config
    pairings = hall_pairings(args.tsh, config, args.pairings, args.tables)
    try:
        args.round = hall_round(pairings, getattr(args, "round", None))
    except UsageError:
        pairings.close()  # (a refusal has pairings: without them no round is refused)
        raise
    host, _, port = args.phones.rpartition(":")
    phone = phone_url(args.phone_url, host, port)
    args.password_hash = page_password(args.page_password_file)
    reach(args.broker, args.port, args.tls_ca, guessed_plain=guessed_plain)
    return serve_hall(args, password, out, draw_panel, keys=keys, pairings=pairings, phone=phone)


def ca_beside_keys(keys_path):
    """hall-setup's CA (`tileclock-ca.pem`) in the folder of `--keys` `keys_path`, where it
    writes both, or None: with it, `tileclock hall --keys DIR/tileclock.keys` speaks TLS to the
    broker hall-setup made without being told (`--port` given, or `--tls-ca`, wins)."""
    if not keys_path:
        return None
    beside = os.path.join(os.path.dirname(keys_path), "tileclock-ca.pem")
    return beside if os.path.isfile(beside) else None


def read_keys_option(path):
    """The clocks' command keys in `--keys` `path` (hall-setup's tileclock.keys), or None without
    one; a UsageError naming the option if the file cannot be read as keys."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            return read_keys(file.read())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"--keys {path}: {_why(error)}") from None


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
        raise UsageError(f"--page-password-file {path}: {_why(error)}") from None
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
            raise UsageError(f"--password-file {args.password_file}: {_why(error)}") from None
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


class OpenHall:
    """The hall's parts, wired and started: `feed` (the broker's records), `scores` (the score
    entries' `ScoreBook`), `links` (the score links sent to the clocks, or None without a phone
    address) and `page` (the director's page)."""

    def __init__(self, feed, scores, links, page, tsh_queue=None):
        self.feed, self.scores, self.links, self.page = feed, scores, links, page
        self.tsh_queue = tsh_queue  # a HallQueue with --tsh-dir, else None

    def close(self):
        """Stop the TSH queue's passes, the page, then the feed."""
        if self.tsh_queue is not None:
            self.tsh_queue.close()
        self.page.close()
        self.feed.close()


def open_hall(
    broker,
    port,
    password,
    out,
    web,
    allowed=None,
    draw_panel=None,
    *,
    tls_ca=None,
    keys=None,
    pairings=None,
    phone=None,
    phones=None,
    password_hash=None,
    tsh_dir=None,
):
    """The hall's feed on the broker at `broker`:`port`, its records into `out`, the score entries
    beside them, and its page on `web` (HOST:PORT) for browsers calling it `allowed` (None: this
    laptop's own names); `tileclock hall` and `hall-demo` both open it here. `tls_ca` and `keys`
    are HallFeed's; `pairings` (a HallPairings) names the players on the score forms and on a
    call's banner; with `phone` (the address phones reach the page by) score links are sent to
    the clocks. `phones` (HOST:PORT) is the players' door, serving the score form only;
    `password_hash` the director's login (where `web` is not loopback). The feed is started
    before the page; if the page cannot listen there, the feed is closed again and the OSError
    raised. With `tsh_dir` (TSH's folder) each settled table is queued into TSH's remote queue
    (`hall_queue.HallQueue`). The page needs the director extra."""
    from ..director.event.entries import ScoreBook
    from ..director.event.score_links import ScoreLinks, phone_base
    from ..director.pages.web import HallPage

    # a call's banner names the players at its table (from the pairings' last copy: never a file read)
    players = pairings.names if pairings is not None else None
    feed = HallFeed(broker, port, password, out, tls_ca=tls_ca, keys=keys, players=players).start()
    try:
        scores = ScoreBook(os.path.join(out, "scores"))  # the score entries, beside the records
        links = None
        if phone:
            links = ScoreLinks(scores, phone_base(phone), feed.command)  # the page's New phone links too
            # the links send through the feed, so they are made after it and subscribed to it
            feed.subscribe(links.stored)  # each game's end: its score link to the clock
        host, _, page_port = web.rpartition(":")
        door = None
        phone_hosts = None
        if phones:
            phone_host, _, phone_port = phones.rpartition(":")
            door = (phone_host or "0.0.0.0", int(phone_port))
            if allowed or phone:  # the phones call the page by the address their links name
                from ..director.pages.guard import own_hosts

                phone_hosts = [
                    *(allowed or own_hosts(door[0])),
                    *([urlsplit(phone).hostname] if phone else []),
                ]
        page = HallPage(
            feed, host or "127.0.0.1", int(page_port), allowed, draw_panel, scores, pairings, links,
            phones=door, phone_hosts=phone_hosts, password_hash=password_hash,
        )  # fmt: skip  # the page's arguments, then the doors
        page.start()
    except BaseException:
        feed.close()
        raise
    tsh_queue = None
    if tsh_dir:
        from ..director.event.hall_queue import HallQueue

        tsh_queue = HallQueue(tsh_dir, out, scores, audit=getattr(page, "audit", None)).start()
        page.tsh_queue = tsh_queue  # the Scores page shows each table's state in TSH
    return OpenHall(feed, scores, links, page, tsh_queue)


def serve_hall(args, password, out, draw_panel=None, keys=None, pairings=None, phone=None):
    """`tileclock hall` once its arguments are checked (`keys`, `pairings` and `phone` read from
    them): until interrupted."""
    from ..director.follow.collect import ClockFeed

    try:
        from ..director.pages.web import HallPage  # noqa: F401  # open_hall's, asked for here
    except ImportError:
        raise UsageError(
            "the hall's page needs the director extra: pip install 'tileclock[director]'"
        ) from None
    allowed = args.allow_host
    try:
        hall = open_hall(
            args.broker, args.port, password, args.out, args.web, allowed, draw_panel,
            tls_ca=args.tls_ca, keys=keys, pairings=pairings, phone=phone, phones=args.phones,
            password_hash=getattr(args, "password_hash", None), tsh_dir=getattr(args, "tsh_dir", None),
        )  # fmt: skip  # the feed's arguments, then the rest
        hall.page.given_round = getattr(args, "round", None)  # offered when TSH's is not known
    except ssl.SSLError as error:  # the broker's CA file, read as the feed is made
        raise UsageError(f"--tls-ca {args.tls_ca}: {error.reason or error}") from None
    except OSError as error:
        if error.filename:  # the records folder's scores/, not the page's address: said as it is
            raise
        raise UsageError(
            f"--web {args.web} or --phones {args.phones}: cannot serve the page there: {_why(error)}"
        ) from None
    feed, scores, page = hall.feed, hall.scores, hall.page
    feed.connection.wait_first()
    if feed.connection.refused is not None:
        hall.close()
        raise UsageError(
            f"the broker at {args.broker}:{args.port} refused the director: {feed.connection.refused} "
            "(check --password-file, $TILECLOCK_HALL_PASSWORD or --password)"
        )
    serial = [ClockFeed(port, feed.store) for port in args.serial or []]
    if scores.problem:
        out.write(f"tileclock hall: error: {os.path.join(args.out, 'scores', scores.problem)}\n")
    out.write(f"tileclock hall: records into {args.out}; the page is at {page.address}\n")
    offered = page.next_round()
    if offered is not None:
        from_tsh = page.pairings is not None and page.pairings.next_round is not None
        whence = "TSH's next unscored round, from its files" if from_tsh else "--round"
        out.write(f"tileclock hall: the page offers round {offered} ({whence})\n")
    out.write(f"tileclock hall: the players' door (the score form only) is at {page.phone_address}\n")
    if page.sessions.login:  # the director's door is open beyond this laptop: a login first
        out.write(
            "tileclock hall: the director's page asks for a login: the page's password"
            + (
                " (--page-password-file)"
                if page.sessions.password_hash
                else " (none given: --page-password-file)"
            )
            + f", or this link, good for one browser once: {page.one_time_link()}\n"
        )
    if phone:
        out.write(f"tileclock hall: score codes on the panels after each game, for phones at {phone}\n")
    else:
        out.write("tileclock hall: no score codes on the panels (give --phone-url http://ADDRESS:PORT)\n")
    if feed.connection.in_the_clear:
        out.write(f"tileclock hall: {feed.connection.in_the_clear}\n")
    if not feed.connection.connected.is_set():
        out.write(f"tileclock hall: {feed.connection.down}; still trying\n")
    out.flush()
    said, said_notices, said_pairings = None, feed.store.noticed, None
    try:
        while True:
            feed.step(0.05 if serial else 0.2)
            for port_feed in serial:
                port_feed.poll()
            said_notices = _new_notices(feed.store, said_notices, out)
            said_pairings = _pairings_news(pairings, said_pairings, out)
            alert = feed.disk.error and feed.disk.error[0]
            if alert != said:  # a disk fault named once when it starts, once when it ends
                out.write(f"tileclock hall: {feed.disk.text or 'disk: writing again'}\n")
                out.flush()
                said = alert
    except KeyboardInterrupt:
        pass
    finally:
        if hall.tsh_queue is not None:
            hall.tsh_queue.close()
        page.close()
        for port_feed in serial:
            port_feed.close()
        feed.close()
    return 0


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
        raise UsageError(f"{option}: {error.filename or ''}: {_why(error)}") from None
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


def phone_url(given, host, port):
    """The address phones reach the page by (the start of the score links): `--phone-url` `given`,
    else `--web`'s own address `host`:`port` when it is one a phone can reach (not loopback, not
    every interface)."""
    if given:
        from ..director.event.score_links import phone_base

        with given_by_the_user():
            phone_base(given)  # its words name --phone-url, before anything runs
        return given.rstrip("/")
    if host and host not in ("0.0.0.0", "::", "localhost") and not host.startswith("127."):
        return f"http://{host}:{port}"
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
        raise UsageError(f"--broker {host} --port {port}: {_why(error)}") from None


def _handshake(connection, host, port, tls_ca):
    """A TLS handshake on `connection` checked against `tls_ca`, as the feed's own will be; a
    UsageError naming --tls-ca (or --port) if it fails."""
    try:
        context = ssl.create_default_context(cafile=tls_ca)
    except (OSError, ssl.SSLError) as error:
        raise UsageError(f"--tls-ca {tls_ca}: not a CA certificate ({_why(error)})") from None
    try:
        context.wrap_socket(connection, server_hostname=host).close()
    except ssl.SSLCertVerificationError as error:
        raise UsageError(
            f"--tls-ca {tls_ca}: the broker at {host}:{port} has a certificate this CA did not sign, or "
            f"not for {host} ({error.verify_message}): hall-setup's tileclock-ca.pem, and a name it wrote it for"
        ) from None
    except (ssl.SSLError, ConnectionError) as error:
        raise UsageError(
            f"--broker {host} --port {port}: no TLS there ({_why(error)}): hall-setup's broker has it on 8883"
        ) from None


def _why(error):
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def _pairings_news(pairings, said, out):
    """Say the pairings' problem once when it starts or changes, and once when it is over (the
    detail, naming the file, is the director's: a phone is only told the names may be stale)."""
    problem = pairings.problem if pairings is not None else None
    if problem != said:
        out.write(f"tileclock hall: {problem or 'the pairings are read again: up to date'}\n")
        out.flush()
    return problem


def _new_notices(store, seen, out):
    """Print the store's notices since `seen` (a two clocks with one id, a skipped run...); returns
    how many it has said."""
    if store.noticed < seen:
        seen = 0  # the store was read back from disk (a disk fault): its count started again
    for _, text in list(store.notices)[-(store.noticed - seen) :] if store.noticed > seen else []:
        out.write(f"tileclock hall: {text}\n")
    out.flush()
    return store.noticed
