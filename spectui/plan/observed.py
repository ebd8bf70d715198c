"""What recorded rounds drafted, read once for every view that compares a run with the plan:
the panel's turn, the bench's runs and the accuracy benchmark's.

A draft at a smaller n-max k is the first k tokens of the larger one (a draft model's tokens
do not depend on the n-max), so capping each round at k reads a what-if from one run.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from spectui.engine.events import Round
from spectui.plan.predict import Drafting
from spectui.spec_config import DRAFT_FILE_TYPES, SpecConfig


def drafting_of(rounds: Sequence[Round], model: bool, n_max: int | None = None) -> Drafting:
    """The share of rounds that drafted, their mean draft length and accepted tokens, and the
    share accepted whole, each draft capped at `n_max` where given; `model`: a draft model ran."""
    drafting = [r for r in rounds if r.n_drafted]
    if not drafting:
        return Drafting(0.0, 0.0, 0.0, model)
    cap = n_max if n_max is not None else max(r.n_drafted for r in drafting)
    lengths = [min(r.n_drafted, cap) for r in drafting]
    accepted = [min(r.n_accepted, cap) for r in drafting]
    n = len(drafting)
    return Drafting(
        n / len(rounds),
        sum(lengths) / n,
        sum(accepted) / n,
        model,
        sum(a == k for a, k in zip(accepted, lengths)) / n,
    )


@dataclass(frozen=True)
class Reading:
    """A run of one spec type as the plan prices it: its rounds' drafting (a draft model's capped
    at the configured n-max), how many rounds drafted, and the rounds' mean context depth (None:
    no round)."""

    spec_type: str
    n_max: int | None  # a draft model's n-max; None: an n-gram type (its own sizes bound a draft)
    drafting: Drafting
    drafts: int
    depth: int | None


def read_run(rounds: Sequence[Round], spec: SpecConfig) -> Reading:
    """The rounds that ran `spec`'s one type (a draft model's at its n-max or a larger one: the
    what-if), read as the plan reads acceptance."""
    spec_type = spec.types[0]
    model = spec_type in DRAFT_FILE_TYPES
    n_max = spec.draft_n_max if model else None
    mine = [r for r in rounds if r.configured == spec.types and (n_max is None or r.n_max >= n_max)]
    depth = round(statistics.fmean(r.n_past for r in mine)) if mine else None
    return Reading(spec_type, n_max, drafting_of(mine, model, n_max), sum(1 for r in mine if r.n_drafted), depth)
