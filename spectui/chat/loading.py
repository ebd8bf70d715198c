"""Loading a pair for the chat, in a worker thread: the setup (put on other models when the
picker chose them), the session, and what its traces record of the models and machine."""

from __future__ import annotations

from collections.abc import Callable

from spectui.config.assembly import Report
from spectui.config.resolve import with_models
from spectui.config.setup import Setup
from spectui.engine.interface import ChatSession
from spectui.launch.environment import collect
from spectui.launch.session import open_session


def load_session(
    setup: Setup, models: tuple[str, str | None] | None, status: Callable[[str], object], report: Report
) -> tuple[ChatSession, Setup, dict]:
    """(session, the setup it runs, its environment); raises UserError on a bad pair.
    `report`: where an embedded model's assembly shows its progress."""
    if models is not None:
        setup = with_models(setup, *models, report=report)
    session = open_session(setup, status=status, report=report)
    return session, setup, collect(session, setup, hash_files=False)
