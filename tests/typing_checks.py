"""Read by the type checker only (mypy, run by .ci/run): every kind of session the chat,
`run`, the bench and the A/B view are handed satisfies `ChatSession`, the fake included.
A method missing or with another signature fails the type check, not a user's chat."""

from __future__ import annotations

from spectui.engine.interface import ChatSession
from spectui.engine.server import ServerPool, ServerSession
from spectui.engine.session import Session
from tests.fake_session import FakeSession


def every_session_kind(local: Session, server: ServerSession, pool: ServerPool, fake: FakeSession) -> list[ChatSession]:
    return [local, server, pool, fake]
