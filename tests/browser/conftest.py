"""The headless Chromium the browser tests share (one per test session: starting it costs seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_page import CHROMIUM, Browser


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    opened = Browser(tmp_path_factory.mktemp("chromium") / "profile")
    yield opened
    opened.close()
