"""The chat's model-free tests: each saves chats, so each has its own data and config dirs."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def own_dirs(dirs):
    """tests/conftest.py's `dirs`, for every test here."""
    return dirs
