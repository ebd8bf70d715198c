"""Loading a pair for the chat, in a worker thread: the setup (put on other models when the
picker chose them), its memory checked where it differs from a pair known to fit, the
session, and what its traces record of the models and machine."""

from __future__ import annotations

from collections.abc import Callable

from spectui.chat import memory_check
from spectui.config.assembly import Report
from spectui.config.embedded import resolve_model
from spectui.config.resolve import with_models
from spectui.config.setup import Setup
from spectui.engine.interface import ChatSession
from spectui.launch.environment import collect
from spectui.launch.opening import open_session
from spectui.plan import memory_projection


def load_session(
    setup: Setup,
    models: tuple[str, str | None] | None,
    status: Callable[[str], object],
    report: Report,
    fitted: Setup | None = None,
    project: memory_check.Project = memory_projection.for_setup,
) -> tuple[ChatSession, Setup, dict]:
    """(session, the setup it runs, its environment); raises UserError on a bad pair or one
    that does not fit. `report`: where an embedded model's assembly shows its progress;
    `fitted`: a setup known to fit (the loaded one), whose pair is not projected again."""
    if models is not None:
        setup = with_models(setup, *models, report=report)
    if memory_check.needs_check(setup, fitted):
        assert setup.model is not None  # a local pair
        draft = resolve_model(setup.model_draft, report) if setup.model_draft else None
        memory_check.check(setup, resolve_model(setup.model, report), draft, status, project)
    session = open_session(setup, status=status, report=report)
    return session, setup, collect(session, setup, hash_files=False)
