"""The small interfaces the loop talks to its parts through (`typing.Protocol`s): what a link, a panel,
an edge source and a descriptor that wakes it must offer, and nothing more. A part is any object that
has them; the loop never probes for a method (no `hasattr`), and a fake in a test must offer the same.
mypy holds the loop, these and the assembly to them (`make lint`)."""

from collections.abc import Callable, Hashable
from typing import Protocol, runtime_checkable

from ..clock.view import View
from ..wire.seal import Sealed


@runtime_checkable
class Seal(Protocol):
    """What every command coming in on a link must be sealed with (`links/hall_seal.CommandSeal`)."""

    def open(self, raw: bytes) -> Sealed:
        """The sealed command inside `raw` (its counter, when it was made, its line); a
        `CommandError` saying why it is refused."""

    def refusal(
        self, name: str, made_ms: int, now_ms: int | None, began_ms: int | None
    ) -> tuple[str, str] | None:
        """(why, detail) if command `name`, made at `made_ms`, is not fresh at `now_ms` (this
        clock's wall clock, None while it cannot say) on a game begun at `began_ms`; else None."""


@runtime_checkable
class Link(Protocol):
    """A way records go out and commands come in: the serial link, the hall's uplink.

    It sends from the journal, only what has been through the journal's write. The loop pumps it
    while it has something to send, asks it when it must wake for it, and hands the command
    handler what came in on it (the handler answers a `resend` or a `status` on the same link).
    """

    @property
    def part(self) -> str:
        """Its name in `fault` records and on the panels, and the `source` of the records its
        commands make (`serial`, `hall`)."""

    @property
    def seal(self) -> Seal | None:
        """What every command that comes in on it must be sealed with (the hall's link with a key),
        or None."""

    @property
    def failing(self) -> str | None:
        """Why it cannot send now, or None."""

    @property
    def pending(self) -> bool:
        """Whether it has something to send (the loop pumps it at a wake only then)."""

    def next_wake_ns(self, woke_ns: int) -> int | None:
        """The next instant (the loop's monotonic ns) it needs the loop awake with no input, the
        loop having last woken at `woke_ns` (soon again while a resend streams out, say), or None."""

    def pump(self) -> None:
        """Send what the journal has written since, within the link's budget."""

    def read_lines(self) -> list[bytes]:
        """The director's command lines that came in since (no line endings)."""

    def resend(self, first: int, last: int) -> None:
        """Stream the journal's records `first`..`last` again."""

    def take_missing(self) -> str | None:
        """The seqs a finished resend could not find, once, as text; or None."""

    def answer(self, line: str) -> None:
        """Send a framed line that is not a record (the answer to `status`)."""

    def close(self) -> None:
        """Let go of the port or the connection."""


@runtime_checkable
class Screen(Protocol):
    """One panel as the loop drives it (`hardware/screens.PanelOutput`): each refresh sends whose
    turn it is first, then prepares every panel's frame, then sends them (at once on separate buses)."""

    @property
    def faces(self) -> str:
        """The side it faces (`A`, `B`): its name in `fault` records and in the loop's `frames`."""

    @property
    def bus(self) -> Hashable:
        """Which bus it is on: panels on different buses can be written at the same time."""

    @property
    def failing(self) -> str | None:
        """Why the panel does not answer now, or None."""

    def show_large(self, directed: str | None) -> None:
        """Draw the large-digits face from the next frame on if `directed` (a director's
        `set large=`: "A", "B", "AB" or "") names its side; None: as the config says."""

    def send_turn(self, view: View, idle_ns: int | None = None) -> None:
        """If whose turn it is changed, send only that, at once, before any frame is drawn."""

    def prepare(self, view: View, idle_ns: int | None = None) -> object:
        """Draw `view` (with the clock idle `idle_ns`, or None) into a frame, ready to send; returns
        the frame."""

    def send(self) -> None:
        """Put the prepared frame on the bus (what changed of it)."""

    def next_change(self, idle_ns: int | None) -> int | None:
        """How long after an idleness of `idle_ns` its picture changes by itself (it dims, moves,
        goes dark), in ns, or None."""


@runtime_checkable
class Watch(Protocol):
    """Something the loop checks now and then on its own thread, between its more urgent work
    (`power.PowerWatch`: the supply's flags): it is checked only on a wake with no edge that made
    no record other than a checkpoint (a tick's), and a true `failing` is a fault as a link's or a panel's is."""

    @property
    def part(self) -> str:
        """Its name in `fault` records and on the panels (`power`)."""

    @property
    def failing(self) -> str | None:
        """What is wrong, as of its last check, or None."""

    def next_wake_ns(self, woke_ns: int) -> int | None:
        """The latest instant (the loop's monotonic ns) an idle loop must wake to check it, the loop
        having last woken at `woke_ns`, or None."""

    def check(self, now_ns: int) -> None:
        """Check it, if a check is due at `now_ns` (a quick read: never a wait, never a process)."""


class WakeSource(Protocol):
    """Something that may need the loop awake with no input: a timer of a part."""

    def __call__(self) -> int | None:
        """The next instant (monotonic ns) the loop must wake for it, or None."""


@runtime_checkable
class EdgeSource(Protocol):
    """Where the buttons' edges come from (`hardware/buttons.ButtonBoard`): it posts each edge to the
    loop's inbox from its own thread, and may hand over on demand every edge stamped so far."""

    #: () -> None: post every edge stamped so far, at once; None where the pin backend cannot
    flush_edges: Callable[[], None] | None


@runtime_checkable
class Readable(Protocol):
    """A part whose file descriptor has data for the loop (the serial link's port)."""

    def fileno(self) -> int | None:
        """The open descriptor to wait on, or None while it is closed."""


class TimeSource(Protocol):
    """The clock's time: `hardware/virtual.MonotonicTime` on a Pi, `VirtualTime` in the simulator."""

    @property
    def boot_id(self) -> str | None:
        """What names the epoch its instants count from (the kernel's boot id; a restart in the
        same boot then takes a running game up exactly), or None if it is not known."""

    def __call__(self) -> int:
        """Now, in integer monotonic nanoseconds."""
