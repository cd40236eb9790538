"""The director's commands: `collect`, `hall`, `hall-demo`, `spectators`, `export`, `replay`, `plot`,
`sheet`, `scores` (`hall-setup`, which writes the hall's files and cards: hall_setup.py)."""

import signal
import sys
import threading
import time
from pathlib import Path

from ..clock.timecode import NS_PER_MS, format_clock, parse_seconds
from .errors import given_by_the_user
from .paths import folder_to_make


def draw_panel(view, side):
    """One panel of `view` as the clock draws it (the hall page's panel pictures): the device's
    renderer, handed to the director's page from here, so `director/` never imports `device/`."""
    from ..device.screen.face import render
    from ..device.screen.text import Panel

    return render(view, Panel(faces=side))


def cmd_collect(args):
    """Collect records from clocks on serial ports (the director's computer)."""
    from ..director.follow.collect import collect, read_tables, scene_hello
    from ..director.follow.port import check_port
    from ..director.follow.start_times import read_start_times

    folder_to_make(args.out, "--out")
    tables = {}
    with given_by_the_user():  # each reader's ValueError names the option, file or port
        if args.tables:
            with open(args.tables, encoding="utf-8") as file:
                tables.update(read_tables(file, args.tables))
        tables.update(read_tables(args.table or [], "--table"))
        start_times = read_start_times(args.time or [], args.ports)
        for port in args.ports:  # last: a mistake in the options is said first, wherever the clocks are
            check_port(port)
    hello = scene_hello(args.round, tables)
    collect(args.ports, args.out, stop_after_idle_s=args.idle_exit, hello=hello, start_times=start_times)
    return 0


def cmd_hall(args):
    """The hall: every clock's records through the broker, and the director's web page."""
    from .hall import run_hall

    folder_to_make(args.out, "--out")
    return run_hall(args, sys.stdout, draw_panel)


def cmd_hall_demo(args):
    """The hall in one command: a private mosquitto, simulated clocks playing, the director's page."""
    import secrets
    import tempfile

    from ..director.hall.broker import BrokerError, LocalBroker
    from ..director.hall.tls import PAGE_CERT, PAGE_KEY
    from ..director.hall.viewers_broker import ViewersBroker
    from ..sim.fleet import Fleet
    from ..wire.topics import VIEWERS
    from .hall import open_hall, page_tls_said
    from .hall_checks import PLAIN_DOORS

    folder_to_make(args.out, "--out")
    folder = args.out or tempfile.mkdtemp(prefix="tileclock-hall-")
    ids = [f"clock-{n}" for n in range(1, args.clocks + 1)]
    users = {name: secrets.token_urlsafe(9) for name in ["director", VIEWERS, *ids]}
    try:
        # TLS, as a hall's broker is: the demo's clocks, feed and bridge check its own CA
        broker = LocalBroker(f"{folder}/broker", users, tls=True).start()
    except BrokerError as error:
        print(f"tileclock: {error}", file=sys.stderr)
        return 1
    started = [broker.stop]  # what to stop, however far the start got
    # the page's HTTPS from the broker's own CA (tls.local_tls), as hall-setup's is
    ca = Path(broker.ca_file).parent
    page_files = None if args.plain_http == "both" else (str(ca / PAGE_CERT), str(ca / PAGE_KEY))
    previous = _sigterm_as_ctrl_c()
    try:
        try:
            hall = open_hall(
                "127.0.0.1",
                broker.port,
                users["director"],
                f"{folder}/records",
                args.web,
                args.allow_host,
                draw_panel,
                tls_ca=broker.ca_file,
                phones=args.phones,
                page_tls=page_files,
                plain=PLAIN_DOORS.get(args.plain_http, ()),
            )
        except OSError as error:
            print(
                f"tileclock: the page cannot listen on {args.web}: {error.strerror or error} "
                "(choose another with --web HOST:PORT)",
                file=sys.stderr,
            )
            return 1
        started.append(hall.close)
        feed, page = hall.feed, hall.page
        clocks = (f"{folder}/clocks", "127.0.0.1", broker.port, users, args.clocks)
        fleet = Fleet(*clocks, speed=args.speed, rounds=True, calls=True, tls_ca=broker.ca_file).start()
        started.append(fleet.close)
        viewers = ViewersBroker(
            f"{folder}/viewers", broker.port, users[VIEWERS], hall_ca=broker.ca_file
        ).start()
        started.append(viewers.stop)
        print(
            f"mosquitto on 127.0.0.1:{broker.port} (TLS, its CA {broker.ca_file}); {args.clocks} clocks playing ({args.speed:g}x); "
            f"records in {folder}"
        )
        print(
            f"the spectators' page: {viewers.address}   a stream overlay: "
            f"{viewers.address}overlay.html?board={ids[0]}&a=Alice&b=Bob"
            + ("" if args.speed == 1 else "   (they count in real time: right at --speed 1 only)")
        )
        print(
            "the boards wait at a fresh game for a round: start one on the page (Start round; its "
            "start time is this laptop's time of day), call, correct, and end it with Round over"
        )
        if args.director:  # rounds, a call answered, a correction and round over, on the page's paths
            from ..director.pages.demo_director import DemoDirector

            started.append(DemoDirector(page).start().close)
            print("a scripted director plays along (by=hall-demo): each round 3 minutes, then round over")
        print(f"the players' door (the score form only): {page.phone_address}")
        for line in page_tls_said(page_files, PLAIN_DOORS.get(args.plain_http, ()), page):
            print(line)
        if page.sessions.login:
            print(f"the director's page asks for a login: open this link once: {page.one_time_link()}")
        print(f"the director's page: {page.address}   (Ctrl-C to stop)", flush=True)
        feed.run(threading.Event().is_set)
    except KeyboardInterrupt:
        pass
    finally:
        for stop in reversed(started):
            stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        # where the demo's games are, for `sheet` or `scores` (a folder of its own is never deleted)
        kept = "" if args.out else f"; a temporary folder: remove {folder} when done"
        print(f"stopped: the demo's records are in {folder}/records{kept}", flush=True)
    return 0


def _sigterm_as_ctrl_c():
    """SIGTERM (`timeout`, a closed terminal, `kill`) stops the demo as Ctrl-C does, its brokers
    with it: by default it ends the process at once and leaves both mosquittos running. The
    handler it replaces, to put back (None off the main thread, where none can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(_signum, _frame):
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def cmd_spectators(args):
    """The spectators' door (docs/hall.md, "The spectators' door"): their pages and their MQTT over
    WebSockets, relayed to the spectators' mosquitto on 127.0.0.1, until Ctrl-C."""
    from ..director.pages.spectators import SpectatorsDoor

    host, _, port = args.listen.rpartition(":")
    try:
        door = SpectatorsDoor(args.broker_port, host, int(port)).start()
    except OSError as error:
        raise SystemExit(
            f"--listen {args.listen}: cannot serve the spectators' pages there: {error}"
        ) from None
    print(
        f"the spectators' pages on http://{args.listen}/, relayed to 127.0.0.1:{args.broker_port}", flush=True
    )
    previous = _sigterm_as_ctrl_c()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        door.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def cmd_export(args):
    """Export the games of a journal as CSV and JSON (and each game's picture, with the director extra)."""
    from ..director.records.export import export
    from ..director.records.plot import available

    pictures = not args.no_pictures and available()  # looking costs the plotting library's memory
    with given_by_the_user():  # the journal, the game asked for, the file to write: in words
        written = export(args.journal, args.out, game=args.game, pictures=pictures)
    for path in written:
        print(path)
    if not pictures and not args.no_pictures and not args.out.endswith((".csv", ".json")):
        print("(no game pictures: they need the director extra, pip install 'tileclock[director]')")
    return 0


def cmd_sheet(args):
    """The penalty sheet of a round: games matched to the pairings, as CSV and a printable page."""
    from .sheet import run_sheets

    return run_sheets(args, sys.stdout)


def cmd_scores(args):
    """A round's final scores with every penalty applied, as lines for TSH's score entry and a CSV."""
    from .scores import run_scores

    return run_scores(args, sys.stdout)


def cmd_plot(args):
    """Draw the picture of a recorded game (PNG or SVG)."""
    from ..director.records.moved import joined, records_folder
    from ..director.records.plot import picture_format, write_picture
    from ..director.records.replay import load_game

    with given_by_the_user():  # the picture's ending, the log, the game, the instant: in words
        picture_format(args.out)  # a wrong ending is refused before anything is read
        game = joined(load_game(args.log, args.game), records_folder(args.log))  # a spare's: both parts
        at_ms = None if args.at is None else parse_seconds(args.at) // NS_PER_MS
    print(write_picture(game, args.out, title=args.title or f"{args.log}, game {game.seq}", at_ms=at_ms))
    return 0


def cmd_replay(args):
    """Show what both screens showed at an instant of a recorded game."""
    from ..device.screen.face import render
    from ..device.screen.text import Panel
    from ..director.records.moved import joined, parts_line, records_folder
    from ..director.records.replay import describe, load_game, view_at, within_the_game

    with given_by_the_user():  # the picture's ending, the log, the game, the instant: in words
        if args.plot:
            from ..director.records.plot import picture_format

            picture_format(args.plot)
        part = load_game(args.log, args.game)
        game = joined(part, records_folder(args.log))  # a spare's game: the dead clock's part first
        if game is not part and args.after_seq is not None:
            raise ValueError(
                f"{parts_line(game)}: a seq names one clock's record, not an instant of the whole "
                "game; give --at (the time since the game's start), or replay one clock's game file"
            )
        at_ms = None if args.at is None else parse_seconds(args.at) // NS_PER_MS
        at_ms, after_seq, note = within_the_game(game, at_ms, args.after_seq)
        if note:
            print(f"{note}: the state at the end")
        view, record, at_ms = view_at(game, at_ms=at_ms, after_seq=after_seq)
    if game is not part:
        print(parts_line(game))
    print(describe(view, record, at_ms, game))
    if args.png:
        from ..sim.frames import side_by_side

        side_by_side({side: render(view, Panel(faces=side)) for side in "AB"}).save(args.png)
        print(f"both screens drawn in {args.png}")
    if args.plot:
        from ..director.records.plot import write_picture

        write_picture(game, args.plot, title=f"{args.log} at {format_clock(at_ms // 1000)}", at_ms=at_ms)
        print(f"the game's picture, with the instant marked, in {args.plot}")
    return 0
