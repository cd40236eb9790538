"""The small interfaces the loop talks to its parts through (`typing.Protocol`s): what a link, a panel,
an edge source and a descriptor that wakes it must offer, and nothing more. A part is any object that has them; the loop never
probes for a method (no `hasattr`), and a fake in a test must offer the same."""

from collections.abc import Callable
from typing import Protocol, runtime_checkable


@runtime_checkable
class Link(Protocol):
    """A way records go out and commands come in: the serial link, the hall's uplink.

    It sends from the journal, only what has been through the journal's write."""

    #: its name in `fault` records and on the panels (`serial`, `hall`)
    part: str
    #: what every command that comes in on it must be sealed with (the hall's link with a key:
    #: `hall_seal.CommandSeal`), or None
    seal: object

    @property
    def failing(self) -> str | None:
        """Why it cannot send now, or None."""

    @property
    def pending(self) -> bool:
        """Whether records wait to go out (the loop retries while they do)."""

    @property
    def streaming(self) -> bool:
        """Whether a resend is going out a budget a wake (the loop wakes again soon)."""

    def pump(self) -> None:
        """Send what the journal has written since, within the link's budget."""

    def read_lines(self) -> list:
        """The director's command lines that came in since (bytes, no line endings)."""

    def resend(self, first: int, last: int) -> None:
        """Stream the journal's records `first`..`last` again."""

    def take_missing(self) -> object:
        """The seqs a finished resend could not find, once, or nothing."""

    def answer(self, line: str) -> None:
        """Send a framed line that is not a record (the answer to `status`)."""

    def close(self) -> None:
        """Let go of the port or the connection."""


@runtime_checkable
class Screen(Protocol):
    """One panel as the loop drives it (`hardware/screens.PanelOutput`)."""

    def prepare(self, view, idle_ns=None) -> object:
        """Draw `view` (as of an idle time) into a frame, ready to send; returns the frame."""

    def send(self, first: bool = False) -> None:
        """Put the prepared frame on the bus: with `first`, only whose turn it is."""

    @property
    def failing(self) -> str | None:
        """Why the panel does not answer now, or None."""


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

    #: what names the epoch its instants count from (the kernel's boot id; a restart in the same
    #: boot then takes a running game up exactly), or None if it is not known
    boot_id: str | None

    def __call__(self) -> int:
        """Now, in integer monotonic nanoseconds."""
