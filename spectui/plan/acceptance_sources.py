"""A plan for a pair on this machine, and where its acceptance comes from, chosen in one place.

The order, per type: the rounds of a run being compared with the plan (the chat's turn, the
bench's runs); else the user's saved answers for the pair and type (at least MIN_DRAFTS
drafts); else the calibration on the starter prompts: a draft model's acceptance per position
at n-max 8, an n-gram type's drafts replayed over its answers. The curve is the caller's: the
cached one, or one with the bench's own overheads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spectui.plan.acceptance import Calibration, Saved, replay_ngram
from spectui.plan.curve import Curve
from spectui.plan.observed import Reading
from spectui.plan.predict import DEPTH, Drafting
from spectui.plan.report import Plan
from spectui.spec_config import NGRAM_TYPES, SpecConfig
from spectui.spec_types import Spec


def _saved_words(s: Saved) -> str:
    return f"your saved answers ({s.answers}, {s.drafts} drafts)"


def build_plan(
    curve: Curve,
    spec: SpecConfig,
    depth: int = DEPTH,
    *,
    model_type: str | None = None,
    run: Reading | None = None,
    saved: Mapping[str, Saved] | None = None,
    calibration: Calibration | None = None,
    ngram: Sequence[Spec] = NGRAM_TYPES,
    pair_flags: str = "",
) -> Plan:
    """The plan of `model_type` (a draft model's type; None: none) and the `ngram` types at
    `spec`'s sizes, or of `run`'s one type alone, each from the first source that has its
    acceptance (the module's order)."""
    saved = saved or {}
    if run is not None:
        words = {run.spec_type: f"the run's rounds ({run.drafts} drafts)"}
        if run.n_max is not None:  # a draft model, read at its n-max
            at = {run.n_max: run.drafting if run.drafts else None}
            return Plan(curve, depth, run.spec_type, (), {}, words, pair_flags, at)
        return Plan(curve, depth, None, (), {run.spec_type: run.drafting}, words, pair_flags)
    sources: dict[str, str] = {}
    positions: tuple[float, ...] = ()
    if model_type and model_type in saved:
        positions, sources[model_type] = saved[model_type].positions, _saved_words(saved[model_type])
    elif model_type and calibration is not None:
        positions = calibration.positions
        sources[model_type] = f"calibration on the starter prompts ({calibration.n_rounds} rounds at n-max 8)"
    drafting: dict[str, Drafting] = {}
    for t in ngram:
        found = saved[t].drafting if t in saved else None
        if found is not None:
            drafting[t], sources[t] = found, _saved_words(saved[t])
        elif calibration is not None:
            drafting[t] = replay_ngram(t, spec, calibration.streams)
            sources[t] = "replayed over the calibration's answers"
    return Plan(curve, depth, model_type, positions, drafting, sources, pair_flags)
