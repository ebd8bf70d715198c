"""What `spectui plan` cached for a loaded pair, as the chat reads it: the curve and the
calibration on the starter prompts, and from them one configuration's predicted speedup over
`none` with the noise of the timings it rests on (the welcome card's figure)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from spectui.engine.interface import SessionStatus
from spectui.plan.acceptance import Calibration, replay_ngram
from spectui.plan.curve import Curve, cached_doc
from spectui.plan.predict import DEPTH, Drafting, model_drafting, predict
from spectui.spec_config import DRAFT_FILE_TYPES, NGRAM_TYPES, SpecConfig, config_label


def for_pair(setup, status: SessionStatus) -> tuple[Curve | None, Calibration | None, bool]:
    """The cached curve and calibration for the loaded pair (None where not cached), and
    whether the pair is a local one a plan could measure. A calibration that does not read
    is none: the curve alone still prices the panel's rows."""
    doc, plannable = cached_doc(setup, status)
    if doc is None:
        return None, None, plannable
    try:
        calibration: Calibration | None = Calibration.from_dict(doc["calibration"])
    except (KeyError, ValueError, TypeError, AttributeError):
        calibration = None
    return Curve.from_dict(doc["curve"]), calibration, plannable


@dataclass(frozen=True)
class Expected:
    """A configuration's predicted speedup over `none` on the starter prompts' answers, and the
    noise under it: the largest spread, (max - min) / median, of the decodes it prices."""

    label: str  # "ngram-simple", "draft-simple n-max 3"
    speedup: float
    noise: float


def noise(curve: Curve, d: Drafting) -> float:
    """The largest spread of the timings a prediction rests on: the single step, the verify
    batches around its drafts' length, and the draft model's steps where one runs."""
    sizes = {1, math.floor(d.length) + 1, math.ceil(d.length) + 1}
    points = [p for pts in curve.target.values() for p in pts if p.b in sizes]
    if d.model:
        points += [p for pts in curve.draft.values() for p in pts]
    return max(p.spread for p in points)


def expected(
    curve: Curve, calibration: Calibration, spec_type: str, spec: SpecConfig, depth: int = DEPTH
) -> Expected | str:
    """`spec_type` (at `spec`'s sizes and n-max) predicted as `spectui plan` predicts it from
    the calibration: an n-gram type replayed over its answers, a draft model at its measured
    acceptance per position; or why there is no prediction."""
    if spec_type in NGRAM_TYPES:
        d, n_max = replay_ngram(spec_type, spec, calibration.streams), None
        if not d.share:
            return "it drafted nothing on the starter prompts"
    elif spec_type in DRAFT_FILE_TYPES and curve.draft and calibration.positions:
        n_max = spec.draft_n_max
        if not 1 <= n_max <= len(calibration.positions):
            return f"the plan measured n-max 1 to {len(calibration.positions)}"
        d = model_drafting(calibration.positions, n_max)
    else:
        return "the plan does not time this type"
    p = predict(curve, spec_type, d, n_max, depth=depth)
    assert p.speedup is not None  # measured: a drafting with its acceptance
    return Expected(config_label(spec_type, spec.draft_n_max), p.speedup, noise(curve, d))
