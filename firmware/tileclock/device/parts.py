"""The small interfaces the loop talks to its parts through (`typing.Protocol`s): what a link, a panel
and an edge source must offer, and nothing more. A part is any object that has them; the loop never
probes for a method (no `hasattr`), and a fake in a test must offer the same."""

from typing import Protocol, runtime_checkable


@runtime_checkable
class Link(Protocol):
    """A way records go out and commands come in: the serial link, the hall's uplink.

    It sends from the journal, only what has been through the journal's write."""

    #: its name in `fault` records and on the panels (`serial`, `hall`)
    part: str

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
