"""The verdict's citation: what this machine's costs predict for a configuration against what
the bench measured, so the causes become a number a user can check.

A prediction arrives as plain numbers (cli/bench_curve.py reads the cost curve and the
recorded rounds); here it is judged against the measured speedup and the bench's noise,
and worded. A gap wider than the noise plus GAP_MARGIN is said, never hidden.
"""

from __future__ import annotations

GAP_MARGIN = 0.10  # the model's own error on a quiet machine is within this (docs/performance.md)
PLAN_CACHE = "plan cache"
BENCH = "measured by the bench"
SOURCES = {PLAN_CACHE: "spectui plan's curve", BENCH: "timed after the runs"}


def _x(v: float) -> str:
    return f"{v:.2f}x"


def _break_even(alpha: float | None) -> str:
    if alpha is None:
        return "no break-even: it loses even at acceptance 1"
    if alpha == 0:
        return "it pays at any acceptance"
    return f"break-even {alpha:.2f}"


REASONS = {  # (which way the configuration missed, how the baseline ran against its curve) -> why
    ("below", "slow"): "the machine ran slower than its curve (another process?)",
    ("below", "fast"): "the baseline ran faster than its curve, which shrinks the measured speedup",
    ("below", "on"): "the baseline ran as predicted, so this configuration costs more than the curve counts",
    ("above", "slow"): "the baseline ran slower than its curve (another process during its runs?)",
}


def _gap(pred: dict, measured: float, base_tok_per_s: float | None, allowed: float) -> str:
    """How far measured and predicted part, and the likeliest reason: the baseline against its
    own prediction tells a machine off its curve from a cost the curve does not count."""
    gap = measured / pred["predicted_speedup"] - 1
    way = "below" if gap < 0 else "above"
    text = f"; {abs(gap):.0%} {way} the prediction, more than the {allowed:.0%} that noise and the model's error allow"
    base, ran = pred.get("predicted_tok_per_s_none"), None
    if base and base_tok_per_s is not None:
        text += f" (the baseline: {base_tok_per_s:.1f} tok/s measured, {base:.1f} predicted)"
        off = base_tok_per_s / base - 1
        ran = "slow" if off < -allowed else "fast" if off > allowed else "on"
    slower, overstated = REASONS["below", "slow"], "the curve overstates a cost here (timed on a busier machine?)"
    return f"{text}: {REASONS.get((way, ran or ''), slower if gap < 0 else overstated)}"


def cite(
    config: str,
    pred: dict,
    measured: float | None,
    noise: float | None,
    floor: float,
    base_tok_per_s: float | None = None,
) -> dict:
    """One configuration's citation: `pred` holds predicted_speedup, predicted_tok_per_s_none,
    break_even_alpha, measured_alpha, draft_share and curve_source, or a `reason` there is
    none; `measured` is its measured speedup, `noise` the verdict's (None: one run per prompt,
    judged against `floor`). `flagged`: the two disagree beyond the noise (None: no prediction)."""
    out = {"config": config, **pred, "measured_speedup": measured, "noise": noise, "flagged": None}
    if "reason" in pred:
        return out | {"detail": f"{config}: no prediction: {pred['reason']}"}
    if measured is None:
        return out | {"detail": f"{config}: no prediction: no measured speedup"}
    share = pred["draft_share"]
    drafting = f", drafting in {share:.0%} of rounds" if share < 0.995 else ""
    detail = (
        f"{config}: predicted {_x(pred['predicted_speedup'])} from this machine's decode costs "
        f"({SOURCES[pred['curve_source']]}) at the measured acceptance {pred['measured_alpha']:.2f}{drafting} "
        f"({_break_even(pred['break_even_alpha'])}); measured {_x(measured)} "
        + (f"+-{noise:.0%}" if noise is not None else "(noise unknown: one run per prompt)")
    )
    allowed = (floor if noise is None else noise) + GAP_MARGIN
    flagged = abs(measured / pred["predicted_speedup"] - 1) > allowed
    if flagged:
        detail += _gap(pred, measured, base_tok_per_s, allowed)
    return out | {"flagged": flagged, "detail": detail}
