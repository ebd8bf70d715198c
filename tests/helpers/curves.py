"""Cost curves made by hand, for the plan's arithmetic, the panel, the card and the bench's citation."""

from __future__ import annotations

from spectui.plan.curve import Curve, Point


def costs(
    ratios: dict[int, float], t1: float = 0.1, draft: float = 0.0, overhead: float = 0.0, spread: float = 0.0
) -> Curve:
    """t(b) = t1 * ratios[b] at one depth (each point's noise `spread`), a draft step of `draft`
    seconds (none timed at 0), `overhead` seconds a round outside llama.cpp with a draft or without."""
    pts = tuple(Point(b, t1 * r, spread) for b, r in sorted(ratios.items()))
    drafts = {64: (Point(1, draft, 0.0), Point(2, draft, 0.0))} if draft else {}
    return Curve({64: pts}, drafts, overhead, overhead)
