"""The chat app's Pilot tests: each saves chats and settings, so each has its own data and
config dirs."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def own_dirs(dirs):
    """tests/conftest.py's `dirs`, for every test here."""
    return dirs
