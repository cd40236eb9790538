"""The speech tools a test of what is heard needs: espeak-ng, pocketsphinx and its English model;
skipped without them on a laptop, failed without them in CI."""

import os
import shutil
from pathlib import Path

import pytest

TOOLS = ("espeak-ng", "pocketsphinx_continuous")
MODEL = Path("/usr/share/pocketsphinx/model/en-us/en-us")


def _need_tools():
    missing = [tool for tool in TOOLS if shutil.which(tool) is None] + (
        [] if MODEL.is_dir() else [str(MODEL)]
    )
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install espeak-ng, pocketsphinx, pocketsphinx-en-us: missing {missing}")
        pytest.skip(f"missing {missing}")
