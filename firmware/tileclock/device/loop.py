"""The clock's one loop: inputs in, records out, screens refreshed; it sleeps until something can change.

Its parts are handed to it at construction (its links as a list, its panels), and whatever may
wake it registers with its `reactor.Reactor`: the loop's own timers, and each link's and panel's,
asked when it must wake through its `parts` Protocol, never by a look inside it. Pin backends
post edges into its inbox from their own threads; everything else happens on the loop's thread,
in time order. The same `Daemon` serves the service on a Pi (real monotonic time, `run_forever`)
and the simulator (virtual time, driven step by step through `pump`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..clock.core import GameClock
from ..clock.timecode import NS_PER_S
from ..wire.records import Record
from .commands import CommandHandler
from .journal import Journal
from .parts import EdgeSource, Link, Screen, WakeSource, Watch
from .reactor import Reactor
from .screen.face import fault_text
from .timings import WakeTimings
from .wakers import Inbox

if TYPE_CHECKING:  # made only when needed (see `_send_panels`)
    from concurrent.futures import ThreadPoolExecutor

    from .speaker import Speaker

#: How often a part that stopped answering is tried again.
RETRY_NS = NS_PER_S
#: Records that do not make a wake urgent for the panels (see `refresh`)
QUIET_EVENTS = frozenset({"checkpoint"})


class Daemon:
    """Feeds the clock, journals its records, sends them on its `links`, and shows its view on `panels`.

    Each wake applies its inputs, shows the outcome on the panels, then writes and fsyncs the
    wake's records together, and only then hands them to the links, which send from the journal:
    a screen is no promise, so the panels never wait for the card, and nothing leaves the clock
    before it is journaled (a wake of checkpoints alone is written without waiting for the card:
    see journal.py). A link or panel with a true `failing` attribute is a fault: it is recorded
    once when it starts and once when it ends, shown on the panels meanwhile, and retried every
    `RETRY_NS`. Its parts are handed to it here (`parts.py` says what each must offer); `links`,
    the serial link first: a command handed over any other way is answered on it.
    """

    def __init__(
        self,
        clock: GameClock,
        panels: Sequence[Screen] = (),
        journal: Journal | None = None,
        links: Sequence[Link] = (),
        refresh_on_ticks: bool = True,
        on_frames: Callable[[int, dict[str, object]], None] | None = None,
        boot_info: Mapping[str, object] | None = None,
        clock_id: str | None = None,
        *,
        inbox: Inbox | None = None,
        edges: EdgeSource | None = None,
        heartbeat_ns: int | None = None,
        timings: WakeTimings | None = None,
        on_record: Callable[[Record], None] | None = None,
        watches: Sequence[Watch] = (),
        speaker: Speaker | None = None,
    ) -> None:
        self.clock = clock
        #: stamped on every record, so the director can always tell this clock's stream apart
        self.clock_id = clock_id
        self.panels = list(panels)
        self.journal = journal if journal is not None else Journal()
        #: the ways records go out and commands come in (`parts.Link`s): serial, then the hall's if any
        self.links = list(links)
        #: what is checked between wakes' urgent work (`parts.Watch`: the power supply), each a part
        self.watches = list(watches)
        #: answers the director's commands (serial lines, or any other way in)
        back = self.links[0] if self.links else None  # the way back for a command that came with none
        self.commands = CommandHandler(
            clock, self.journal, back, self._publish, faults=lambda: sorted(self._faulty), clock_id=clock_id
        )
        self.refresh_on_ticks = refresh_on_ticks
        self.on_frames = on_frames
        self.on_record = on_record  # called with each record as it is made
        #: the clock's voice (speaker.py), or None: hears each record, never waited for
        self.speaker = speaker
        #: a `WakeTimings` to note where each wake's time goes (the benchmark), or None
        self.timings = timings
        self.boot_info = boot_info
        #: what other threads hand the loop (`wakers.Inbox`): the pin backend posts its edges there,
        #: the service its wake-ups and a script's command lines (`post_edge`, `wake`, `post_command`)
        self.inbox = inbox if inbox is not None else Inbox()
        #: what wakes the loop, and when (`reactor.Reactor`): the inbox, its timers, descriptors and
        #: signals; the pin backend (`edges`, a `parts.EdgeSource`) flushes its edges at each wake
        self.reactor = Reactor(self.inbox, edges.flush_edges if edges is not None else None)
        self.wakeups = 0
        self.frames: dict[str, object] = {}
        self._faulty: set[str] = set()
        self._last_pump_ns: int | None = None
        #: wake at least this often (the service's watchdog), or None
        self.heartbeat_ns = heartbeat_ns
        self._writers: ThreadPoolExecutor | None = None  # other buses' panel writers (made when needed)
        self._acted = False  # this wake made a record other than a checkpoint (a press, most often)
        # the wake sources of the loop and its parts: the clock's deadline, a part at fault retried,
        # the commands' error budget, the watchdog, the panels' idle change, each link's and watch's
        # own; the reactor knows none of them beyond that
        own = (clock.next_deadline, self._retry_due, self.commands.due_ns, self._heartbeat_due)
        askers = (*map(self._asking, self.links), *map(self._asking, self.watches))  # each its own
        for source in (*own, self._panels_due, *askers):
            self.reactor.register_wake(source)
        if speaker is not None:
            self.reactor.register_wake(speaker.next_wake_ns)  # 5:00 and 1:00 left, said as they come

    def boot(self, now_ns: int) -> None:
        """Take up the journal's last game where it stopped (or open the first game), and show it."""
        self._last_pump_ns = now_ns
        records = self.journal.recovery_records()
        if records:
            made = self.clock.recover(records, now_ns, self.boot_info or {})
            self.journal.set_aside(self.clock.unplayable)  # damage: kept aside before anything is added
            self._publish(made)
        else:
            self._publish(self.clock.new_game(now_ns, boot=self.boot_info))
        self._publish_journal_notes(now_ns)
        self.refresh(now_ns)
        self._settle(now_ns)

    def _asking(self, part: Link | Watch) -> WakeSource:
        """A wake source that asks `part` when it must wake, counted from the loop's last wake."""
        return lambda: None if self._last_pump_ns is None else part.next_wake_ns(self._last_pump_ns)

    def _retry_due(self) -> int | None:
        if self._faulty and self._last_pump_ns is not None:
            return self._last_pump_ns + RETRY_NS
        return None

    def _heartbeat_due(self) -> int | None:
        if self.heartbeat_ns and self._last_pump_ns is not None:
            return self._last_pump_ns + self.heartbeat_ns
        return None

    def _panels_due(self) -> int | None:
        """When the idle panels' picture next changes: the clock says how long it has been idle."""
        idle_ns = self.clock.idle_ns(self.clock.now_ns)
        changes = [when for output in self.panels if (when := output.next_change(idle_ns)) is not None]
        return self.clock.now_ns + min(changes) if changes else None

    def pump(self, now_ns: int, taken: tuple | None = None) -> None:
        """Apply every queued edge (and `taken`, one already taken off the queue) in time order,
        run the clock on to `now_ns`, refresh the screens.

        `now_ns` is read before the call: the pin backend's edges are flushed here, after it, so
        every edge stamped up to `now_ns` is applied at its own stamp in this wake."""
        self.wakeups += 1
        self._last_pump_ns = now_ns
        edges = self.reactor.take_inputs(taken)
        self._acted = False
        if self.timings:
            self.timings.begin(edges)
        made = 0
        for t_ns, button, down in edges:
            if button is None:
                continue  # only a wake-up
            made += self._publish(self.clock.edge(button, down, t_ns))
        made += self._publish(self.clock.advance(now_ns))
        made += self._serve_commands(now_ns)
        if self.speaker is not None:
            self.speaker.tick(now_ns)
        if made or edges or self.refresh_on_ticks or self._faulty or self.clock.idle_ns(now_ns) is not None:
            self.refresh(now_ns, urgent=self._acted)
        for watch in () if self._acted or edges else self.watches:  # an edge's wake: at the next
            watch.check(now_ns)
        self._settle(now_ns)
        if self.timings:
            self.timings.end()

    def finish(self, now_ns: int) -> None:
        """Run on to `now_ns` and publish a final `status` record."""
        self.pump(now_ns)
        self._publish(self.clock.status(now_ns))
        self.refresh(now_ns)
        self._settle(now_ns)

    def _settle(self, now_ns: int) -> None:
        """After the panels: write and fsync the wake's records (one fsync for all; a disk that failed
        before is tried again), then hand them to the links (and retry what they could not send).
        A part that fails in doing so is recorded and shown at once, and that record settled too
        (the links are pumped again only then: a wake sends at most one budget of resent lines)."""
        self._flush()
        if self.timings:
            self.timings.mark("journaled")
        made = self.journal.next_seq
        self._publish_journal_notes(now_ns)  # what the journal found at start, or while writing
        self._note_faults(now_ns)
        if self.journal.next_seq != made:
            self._flush()
        if self.timings:
            self.timings.mark("sent")

    def _flush(self) -> None:
        self.journal.write_pending()
        for link in self.links:
            if link.pending:
                link.pump()  # the new records; what it could not send before; room again, the broker back

    def refresh(self, now_ns: int, urgent: bool = False) -> None:
        """Show the clock as of `now_ns` on every panel, with any faults; record faults that began or
        ended. `urgent` (a wake that made a record other than a checkpoint, a press's most often):
        panels on separate buses are written at once."""
        view = self.commands.score_code.on(self.clock.view(now_ns))  # the hall's score link, if any
        if self._faulty:
            view = replace(view, faults=view.faults + tuple(sorted(self._faulty)))
        idle_ns = self.clock.idle_ns(now_ns)  # the clock's: a press on dark panels only wakes them
        for output in self.panels:  # a director's `set large=`, at once (clock/scene.py)
            output.show_large(self.clock.scene.large)
        # whose turn it is, on every panel, before anything else is even drawn
        self._send_panels(lambda output: output.send_turn(view, idle_ns), urgent)
        if self.timings:
            self.timings.mark("turn")
        for output in self.panels:
            self.frames[output.faces] = output.prepare(view, idle_ns)
        self._send_panels(lambda output: output.send(), urgent)
        if self.timings:
            self.timings.mark("panels")
        if self.on_frames:
            self.on_frames(now_ns, self.frames)
        self._note_faults(now_ns)

    def _send_panels(self, send: Callable[[Screen], None], urgent: bool) -> None:
        """`send(output)` for every panel: those on one bus in turn; on an urgent wake, each other
        bus's from a helper thread at the same time (a tick's few bytes go one bus after the
        other: waking a thread for them would double the clock's wake-ups)."""
        buses: dict[object, list[Screen]] = {}
        for output in self.panels:
            buses.setdefault(output.bus, []).append(output)
        if not urgent or len(buses) < 2:
            for output in self.panels:
                send(output)
            return
        if self._writers is None:
            from concurrent.futures import ThreadPoolExecutor  # its workers wait with no timeout

            self._writers = ThreadPoolExecutor(len(buses) - 1, thread_name_prefix="panels")
        first, *others = buses.values()
        pending = [self._writers.submit(_send_each, send, group) for group in others]
        _send_each(send, first)
        for done in pending:
            done.result()

    def healthy(self, now_ns: int) -> bool:
        """Whether the loop is keeping time: the clock's books balance and no deadline is long overdue."""
        deadline = self.clock.next_deadline()
        return self.clock.balanced(now_ns) and (deadline is None or now_ns - deadline < NS_PER_S)

    @property
    def alerts(self) -> tuple[str, ...]:
        """What the panels say is wrong right now, e.g. `("LINK DOWN",)`."""
        return tuple(sorted(fault_text(part) for part in self._faulty))

    def _parts(self) -> Iterator[tuple[str, str | None]]:
        yield self.journal.part, self.journal.failing
        for output in self.panels:
            yield f"panel {output.faces}", output.failing
        for link in self.links:
            yield link.part, link.failing
        for watch in self.watches:
            yield watch.part, watch.failing
        if self.speaker is not None:
            yield self.speaker.part, self.speaker.failing

    def _note_faults(self, now_ns: int) -> None:
        changed = False
        for part, failing in list(self._parts()):
            if failing and part not in self._faulty:
                self._faulty.add(part)
                self._publish(self.clock.fault(now_ns, part, failing))
                changed = True
            elif not failing and part in self._faulty:
                self._faulty.discard(part)
                self._publish(self.clock.fault_cleared(now_ns, part))
                changed = True
        if changed:
            self.refresh(now_ns)  # show (or clear) the alert at once

    def _publish(self, records: Sequence[Record]) -> int:
        self._acted |= any(record.ev not in QUIET_EVENTS for record in records)
        for record in records:
            if self.clock_id is not None:
                record = replace(record, clock=self.clock_id)
            self.journal.append(record, sync=False)  # written with the wake's others, after the panels
            self.commands.score_code.note(record)
            if self.on_record:
                self.on_record(record)
            if self.speaker is not None:
                self.speaker.note(record)
        if self.timings:
            self.timings.records(records, self.clock.t0_ns)
        return len(records)

    def _publish_journal_notes(self, now_ns: int) -> int:
        """Record what the journal found (damage, skipped seqs, records given up, games pruned)."""
        made = 0
        for detail, extra in self.journal.take_notes():
            made += self._publish(self.clock.fault(now_ns, "journal", detail, **extra))
        return made

    def command_lines(self, lines: Sequence[bytes], now_ns: int) -> None:
        """Answer director's command lines that came some other way than the link; show the result."""
        if self.commands.serve(lines, now_ns) or self.commands.score_code.changed:  # a link: no record
            self.refresh(now_ns)

    def _serve_commands(self, now_ns: int) -> int:
        """Hand the director's command lines waiting on each link (the serial line, the hall's
        broker) to the command handler: all carry the same commands, with the same checks."""
        made = 0
        posted = self.inbox.take_commands()
        if posted:
            made += self.commands.serve(posted, now_ns)
        for link in self.links:
            made += self.commands.serve(link.read_lines(), now_ns, link)
        made += self.commands.follow_up(now_ns)
        return made + self.commands.score_code.changed  # a new score link shows, with no record

    def run_forever(
        self,
        now_ns: Callable[[], int] = time.monotonic_ns,
        should_stop: Callable[[], bool] = lambda: False,
        on_wake: Callable[[], None] | None = None,
        boot: bool = True,
    ) -> None:
        """The service's loop: `boot` (unless told not to), then a `pump` at every wake, the reactor
        sleeping between them until the next edge, the next deadline, or data on a registered
        descriptor; until `should_stop()`, `on_wake()` after each."""
        self.reactor.run(self.pump, now_ns, should_stop, on_wake, start=self.boot if boot else None)


def _send_each(send: Callable[[Screen], None], outputs: Sequence[Screen]) -> None:
    for output in outputs:
        send(output)
