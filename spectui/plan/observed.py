"""What recorded rounds drafted, as a plan's Drafting: the panel's, the bench's and the
accuracy benchmark's one reading of a run.

A draft at a smaller n-max k is the first k tokens of the larger one (a draft model's tokens
do not depend on the n-max), so capping each round at k reads a what-if from one run.
"""

from __future__ import annotations

from collections.abc import Sequence

from spectui.engine.events import Round
from spectui.plan.predict import Drafting


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
