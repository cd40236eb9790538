"""The hall behind the page: three simulated clocks on a real broker, the director's feed stepping
in a thread of its own, and the page served."""

import threading

import pytest

from support.halls import Clocks, director, settle
from tileclock.cli.director_commands import draw_panel
from tileclock.director.pages.web import HallPage


@pytest.fixture
def hall(broker, tmp_path):
    """Three simulated clocks, the director's feed stepping in a thread of its own, and the page."""
    clocks = Clocks(broker, tmp_path)
    feed = director(broker, tmp_path / "records")
    clocks.play(2)
    settle(feed, clocks, "the first records")
    stop = threading.Event()
    stepper = threading.Thread(target=feed.run, args=(stop.is_set,), daemon=True)
    stepper.start()
    page = HallPage(feed, port=0, draw_panel=draw_panel).start()
    yield clocks, feed, page
    stop.set()
    stepper.join(5)
    page.close()
    feed.close()
    clocks.close()
