"""The live page's stream: each change of the hall serialised once and shared by every viewer.

One task in the server's loop waits for the feed to change, takes one snapshot of every board
(in a worker thread: the feed's lock is a thread's), serialises it once as a Server-Sent Event
and wakes every viewer, who each send those same bytes. At most `MAX_UPDATES_PER_S` a second,
however busy the hall and however many viewers (it was a snapshot and a serialisation per viewer).
"""

import asyncio
import json
import time

import anyio

#: at most this many updates a second (a busy hall changes all the time)
MAX_UPDATES_PER_S = 5
#: viewers of the live stream at once; one more is told to come back later (503)
MAX_VIEWERS = 100


class LiveBoards:
    """The newest snapshot of `feed`, as one encoded event, and the viewers waiting for the next."""

    def __init__(self, feed, extra=None, clock=time.monotonic):
        self.feed = feed
        self.clock = clock
        self.made = None  # when the newest chunk's snapshot was taken (`clock`, s)
        #: `extra(snapshot)`: what the page adds to each snapshot (the newest command's answers)
        self.extra = extra
        self.chunk = None  # the newest snapshot, as the bytes of one event
        self.serial = 0  # bumped with each new chunk
        self.viewers = 0
        self._changed = None  # an asyncio.Condition, made in the server's loop

    async def run(self):
        """Until cancelled: a new chunk whenever the feed changes, at most `MAX_UPDATES_PER_S`."""
        self._changed = asyncio.Condition()
        version = object()
        while True:
            if version == self.feed.version:
                # a short wait, so that a shutdown never waits on this thread
                await anyio.to_thread.run_sync(self.feed.wait_for_change, version, 1.0)
            if version != self.feed.version:
                snapshot = await anyio.to_thread.run_sync(self.snapshot)
                self.made = self.clock()
                version = snapshot["version"]
                self.chunk = b"data: " + json.dumps(snapshot).encode() + b"\n\n"
                self.serial += 1
                async with self._changed:
                    self._changed.notify_all()
                await asyncio.sleep(1 / MAX_UPDATES_PER_S)  # let changes gather

    def snapshot(self):
        """The feed's snapshot, with what the page adds to it."""
        snapshot = self.feed.snapshot()
        return snapshot if self.extra is None else self.extra(snapshot)

    def aged(self):
        """The newest chunk, its event's id the snapshot's age in ms: a viewer who opens the page
        later counts the running clocks (and a silent board's silence) from when it was taken."""
        age_ms = 0 if self.made is None else max(0, int((self.clock() - self.made) * 1000))
        return b"id: %d\n" % age_ms + self.chunk

    def full(self):
        """Whether one more viewer would be over `MAX_VIEWERS`."""
        return self.viewers >= MAX_VIEWERS

    async def stream(self):
        """One viewer's events: the newest snapshot at once, then each new one."""
        self.viewers += 1
        try:
            seen = 0
            while True:
                if self._changed is None or self.serial == seen:
                    await self._wait(seen)
                    continue
                seen = self.serial
                yield self.aged()
        finally:
            self.viewers -= 1

    async def _wait(self, seen):
        if self._changed is None:  # the producer has not started yet
            await asyncio.sleep(0.05)
            return
        async with self._changed:
            await self._changed.wait_for(lambda: self.serial != seen)
