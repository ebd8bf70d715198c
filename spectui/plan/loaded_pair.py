"""What `spectui plan` cached for a loaded pair, as the chat reads it: the curve and the
calibration on the starter prompts, and from them one configuration's predicted speedup over
`none` with the noise of the timings it rests on (the welcome card's figure)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spectui.engine.interface import SessionStatus
from spectui.plan import identity
from spectui.plan.acceptance import Calibration
from spectui.plan.acceptance_sources import build_plan
from spectui.plan.cache import calibration_for, load_cached
from spectui.plan.curve import Curve
from spectui.plan.predict import DEPTH
from spectui.spec_config import DRAFT_FILE_TYPES, NGRAM_TYPES, SpecConfig, config_label, unpriced
from spectui.spec_types import Spec


def cached_doc(setup, status: SessionStatus) -> tuple[dict | None, bool]:
    """The document `spectui plan` cached for this loaded pair (its curve and calibration), and
    whether the pair is a local one that a plan could measure. A few file stats and a small JSON
    read; never a measurement. A corrupt or foreign file is none: `spectui plan` says why and
    measures again."""
    files = [Path(p) for p in (status.target_path, status.draft_path) if p]
    if setup.server or not all(f.is_file() for f in files):  # a server's models, a test's fake
        return None, False
    doc, _ = load_cached(identity.key(setup, files[0], files[1] if len(files) > 1 else None))
    return doc, True


def cached_for(setup, status: SessionStatus) -> tuple[Curve | None, bool]:
    """The curve `spectui plan` cached for this loaded pair, and whether the pair is a local one
    that a plan could measure (cached_doc)."""
    doc, plannable = cached_doc(setup, status)
    return (Curve.from_dict(doc["curve"]) if doc else None), plannable


def for_pair(setup, status: SessionStatus, prompts: list[str]) -> tuple[Curve | None, Calibration | None, bool]:
    """The cached curve and calibration for the loaded pair (None where not cached), and
    whether the pair is a local one a plan could measure. The calibration is the one cached for
    `prompts` and `setup`'s sampling; none cached for them (`spectui plan` would measure one), or
    one that does not read, is none: the curve alone still prices the panel's rows."""
    doc, plannable = cached_doc(setup, status)
    if doc is None:
        return None, None, plannable
    try:
        raw = calibration_for(doc, identity.calibration_key(setup, prompts))
        calibration = Calibration.from_dict(raw) if raw is not None else None
    except (KeyError, ValueError, TypeError, AttributeError):
        calibration = None
    return Curve.from_dict(doc["curve"]), calibration, plannable


@dataclass(frozen=True)
class Expected:
    """A configuration's predicted speedup over `none` on the starter prompts' answers, the noise
    under it (predict.timing_spread) and engine.noise's word for the two: the plan's row for it."""

    label: str  # "ngram-simple", "draft-simple n-max 3"
    speedup: float
    noise: float
    word: str


def expected(
    curve: Curve, calibration: Calibration, spec_type: Spec, spec: SpecConfig, depth: int = DEPTH
) -> Expected | str:
    """`spec_type` (at `spec`'s sizes and n-max) predicted as `spectui plan` predicts it from
    the calibration: an n-gram type replayed over its answers, a draft model at its measured
    acceptance per position; or why there is no prediction."""
    if why := unpriced((spec_type,), bool(curve.draft)):
        return why.reason
    model = spec_type in DRAFT_FILE_TYPES and bool(calibration.positions)
    if not model and spec_type not in NGRAM_TYPES:
        return "the plan does not time this type"
    plan = build_plan(
        curve, spec, depth, model_type=spec_type if model else None, calibration=calibration,
        ngram=() if model else (spec_type,),
    )  # fmt: skip
    p = plan.row(spec_type, spec.draft_n_max if model else None)
    if p is None or p.speedup is None or p.noise is None or p.word is None:
        measured = f"the plan measured n-max 1 to {len(calibration.positions)}"
        return measured if model else "it drafted nothing on the starter prompts"
    return Expected(config_label((spec_type,), spec.draft_n_max), p.speedup, p.noise, p.word)
