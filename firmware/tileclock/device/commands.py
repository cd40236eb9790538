"""The director's commands, answered in one place (docs/protocol.md, "Commands").

A command reaches the clock as a line (from the serial link, or any other way in);
`CommandHandler` parses it, does what it asks through the clock's own methods
(the clock decides whether the game allows it, and records the answer), and
publishes the records that makes. The loop only hands it the lines.
"""

from ..clock.protocol import CommandError, parse_command


class CommandHandler:
    """Answers command lines for `clock`, serving resends from `journal` over `link`.

    `publish(records)` journals and sends records, returning how many it took.
    """

    def __init__(self, clock, journal, link, publish):
        self.clock = clock
        self.journal = journal
        self.link = link
        self.publish = publish
        self._answers = {
            "status": self._status,
            "resend": self._resend,
            "adjust": self._adjust,
            "round_over": self._round_over,
            "set": self._set,
        }

    def serve(self, lines, now_ns, link=None):
        """Answer every line in `lines` (bytes, without line endings); returns the records made.

        `link` is the way they came in (default: the serial link): a resend goes back on it.

        Bad lines are answered with one `error` record for all of them (naming how many), so a
        noisy line can never flood the journal.
        """
        made = 0
        bad = []
        for raw in lines:
            try:
                command = parse_command(raw)
            except CommandError as error:
                bad.append((str(error), raw[:40].decode("ascii", "replace")))
                continue
            made += self.answer(command, now_ns, link)
        if bad:
            detail, line = bad[0]
            if len(bad) > 1:
                detail += f" (and {len(bad) - 1} more bad lines)"
            made += self.publish(self.clock.error(now_ns, detail, line))
        return made

    def answer(self, command, now_ns, link=None):
        """Do what one parsed command asks; returns the records made."""
        if command.name == "resend":
            return self._resend(now_ns, *command.args, link=link or self.link)
        return self._answers[command.name](now_ns, *command.args)

    def _status(self, now_ns):
        return self.publish(self.clock.status(now_ns))

    def _round_over(self, now_ns):
        return self.publish(self.clock.round_over(now_ns))

    def _adjust(self, now_ns, side, delta_ms):
        return self.publish(self.clock.adjust(now_ns, side, delta_ms))

    def _set(self, now_ns, values):
        return self.publish(self.clock.set_scene(now_ns, **values))

    def _resend(self, now_ns, first, last, link=None):
        journal = self.journal
        link = link or self.link
        last = journal.next_seq - 1 if last is None else last
        missing = link.resend(first, min(last, journal.next_seq - 1))
        made = 0
        if missing or last >= journal.next_seq:
            held = f"{journal.first_seq}-{journal.next_seq - 1}"
            made = self.publish(self.clock.error(now_ns, f"resend: the journal holds seq {held}"))
        link.pump()
        return made
