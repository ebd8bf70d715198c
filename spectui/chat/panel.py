"""What the stats panel shows, as the chat (or a replay) knows it: no widget in it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from spectui.chat.turn import Baseline
from spectui.engine import noise
from spectui.engine.events import Event, Round
from spectui.engine.server_metrics import ServerWide
from spectui.engine.stats import rounds_of
from spectui.plan.acceptance import MIN_DRAFTS
from spectui.plan.acceptance_sources import build_plan
from spectui.plan.curve import Curve
from spectui.plan.observed import read_run
from spectui.plan.predict import DEPTH, speedup
from spectui.spec_config import SpecConfig, unpriced
from spectui.store.chat_types import Message
from spectui.words import plural

# The predicted row's word: engine.noise's (each fits the panel's value column after "×0.91 "),
# or why there is none yet.
FEW, NO_DRAFTS = "few drafts", "no drafts yet"
NEVER, ANY = "never pays", "pays at any α"
NEAR_SE = 2.0  # standard errors of the measured acceptance that may not carry the speedup across 1
BUSIER = 1.5  # a plain step this many times none's: the machine is busier than when none ran


@dataclass
class PanelState:
    """What the panel shows, from the session and the current turn."""

    spec: SpecConfig
    verify: str  # in force: "greedy" at temperature 0, else the configured mode
    events: list[Event] = field(default_factory=list)  # the current or the last turn
    baseline: Baseline | None = None  # what recent `none` turns measured on this target model
    n_ctx: int = 0
    n_past: int | None = 0  # the chat's tokens in the context; None: counted at the next answer
    memory: str = ""
    width: int = 34  # usable columns
    replay: bool = False  # a replay's panel: its advice cannot be a key to press
    curve: Curve | None = None  # this machine's costs for the pair, as `spectui plan` cached them
    plannable: bool = False  # a local pair: without a cached curve, the panel says how to get one
    server: ServerWide | None = None  # a llama-server's own counters: all its slots, other clients' too
    stored: Message | None = None  # a reopened chat's last answer, shown until this session answers

    def plan(self) -> PlanReading | None:
        """The break-even rows' reading of this turn; None: nothing to show (`none`, a server)."""
        if self.curve is None:  # the hint only where a curve would price it (plan_reading), and as the card's f6
            priced = unpriced(self.spec.types, draft_step=True) is None
            return PlanReading(None, None, "", "press f6 to measure break-even") if self.plannable and priced else None
        return plan_reading(self.curve, self.spec, rounds_of(self.events), self.n_past)


@dataclass(frozen=True)
class PlanReading:
    """The panel's plan rows: the break-even acceptance as the rows above it count acceptance
    (accepted / drafted; None: never pays here, or not known before a draft), the predicted
    speedup at the measured acceptance (None: nothing measured) and its word: engine.noise's once
    enough drafts are measured, else why not yet; `why`: one line instead of the rows (not priced)."""

    break_even: float | None
    speedup: float | None
    word: str
    why: str = ""

    @property
    def never(self) -> bool:
        """It loses even at α = 1: said as the word before enough drafts, beside the word after."""
        return self.word == NEVER or (self.break_even is None and self.speedup is not None)

    @property
    def shown(self) -> tuple[str, str]:
        """(break-even, predicted speedup) as the panel writes them."""
        be = "never" if self.never else "-" if self.break_even is None else f"{self.break_even:.0%}"
        return be, "-" if self.speedup is None else f"×{self.speedup:.2f}"


def plan_reading(curve: Curve, spec: SpecConfig, rounds: Sequence[Round], n_past: int | None) -> PlanReading | None:
    """Will this configuration pay, from the cached curve and this turn's rounds at its
    configuration (a draft model's rounds at a larger n-max too, each capped: the what-if);
    None for `none`. A draft model's break-even is known before a round (it drafts n-max
    tokens every round); an n-gram type's needs its measured share and length of drafts."""
    if not spec.drafting:
        return None  # `none`: the baseline
    if why := unpriced(spec.types, bool(curve.draft)):
        return PlanReading(None, None, "", f"break-even: {why.short}")
    spec_type = spec.drafting[0]
    run, depth = read_run(rounds, spec), DEPTH if n_past is None else n_past
    p = build_plan(curve, spec, depth, run=run).row(spec_type, run.n_max)
    assert p is not None  # a plan of the run's one type
    if not run.drafts:
        if run.n_max is None:
            return PlanReading(None, None, NO_DRAFTS)
        return PlanReading(p.break_even, None, NEVER if p.break_even is None else NO_DRAFTS)
    d, be = p.drafting, p.break_even
    if run.drafts < MIN_DRAFTS:
        return PlanReading(be, p.speedup, NEVER if be is None else ANY if be == 0.0 else FEW)
    # The plan row's range (its timings' noise) widened by the acceptance's own error; a draft's
    # positions are not independent (its first rejection ends it): the error counts drafts, not tokens.
    alpha = d.accepted / d.length
    error = NEAR_SE * math.sqrt(alpha * (1 - alpha) / run.drafts) * d.length
    shifted = (replace(d, accepted=min(max(d.accepted + e, 0.0), d.length)) for e in (-error, error))
    lo, hi = (speedup(curve, x, depth) for x in shifted)
    spread = p.noise or 0.0
    return PlanReading(be, p.speedup, noise.decide(lo - spread, hi + spread))


def plain_step_s(rounds: Sequence[Round]) -> float | None:
    """The median time of an answer's rounds that drafted nothing, each one plain step as
    `none`'s are; None without one (a draft model drafts every round)."""
    times = [r.t_draft + r.t_verify + r.t_other for r in rounds if not r.drafted]
    return statistics.median(times) if times else None


def speedup_reading(
    tok_s: float | None,
    n_rounds: int,
    n_drafted: int,
    baseline: Baseline | None,
    replay: bool,
    plain_step: float | None = None,
) -> tuple[str, str]:
    """The panel's speedup, (headline, detail), never more certain than the data: nothing
    before the first round; nothing to compare where nothing was drafted; no figure without
    a `none` turn; no verdict where this answer's plain steps (`plain_step`) ran BUSIER times
    slower than `none`'s, as the machine was busier; an unknown noise from one `none` turn;
    else engine.noise's word against what `none` varied itself (its band: at least its floor)."""
    if n_rounds == 0:
        return "-", "waiting for the first round"
    if n_drafted == 0:
        return "-", "drafted nothing: no speedup"
    if baseline is None or tok_s is None:
        return "-", ("no none answer before this one" if replay else "answer with none too (ctrl+t)")
    x = tok_s / baseline.tok_s
    slower = (plain_step or 0.0) * baseline.tok_s
    if slower > BUSIER:
        return f"×{x:.2f}?", f"busier machine: a plain step took ×{slower:.1f} none's"
    judged = noise.judge(x, noise.band(baseline.spread))
    if judged.word == noise.UNKNOWN:
        return f"×{x:.2f}?", "1 none answer: noise unknown"
    if judged.word == noise.WITHIN:
        floor = judged.noise != baseline.spread  # none varied less than any machine's noise
        within = f"the {judged.noise:.0%} noise floor" if floor else f"none's {baseline.spread:.0%}"
        return noise.WITHIN, f"×{x:.2f}, within {within}"
    return f"×{x:.2f} {judged.word}", f"none varied {baseline.spread:.0%} over {plural(baseline.n, 'answer')}"
