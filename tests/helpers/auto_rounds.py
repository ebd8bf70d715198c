"""A round as auto's Controller learns from it, from what a test knows of it: the one place
the auto tests follow Controller.observe's signature."""

from __future__ import annotations

from spectui.engine.auto import Controller, Decision
from spectui.engine.drafting import RoundDraft


def observe_round(
    c: Controller,
    decision: Decision,
    drafted: list[int],
    accepted: int,
    nxt: int,
    t_verify: float,
    candidate: list[int],
) -> None:
    """`drafted` (its first `accepted` taken), then the target's `nxt`; the n-gram `candidate`,
    used or not; no drafting time."""
    c.observe(decision, RoundDraft(tokens=drafted, n_acc=accepted, nxt=nxt, candidate=candidate), 0.0, t_verify)
