"""`--spec-type auto`: choose, before every round, what to draft and how much.

Speculation pays only when the expected tokens per round outgrow what the round costs.
Both sides are measured online on this machine: the target's verify time as a function
of batch size, the draft model's step time, and acceptance per position for each source.
`decide` is a pure function of those figures; `Controller` keeps the figures.

Expected tokens of a k-token draft with conditional acceptance a_1..a_k (a_i: position i
accepted given 1..i-1 were) = 1 + sum_i prod_{j<=i} a_j; its cost = T(k+1) + draft cost.
The choice maximises tokens per second; "none" is 1 / T(1).

Learning what the draft model would accept costs real time: a probe drafts a couple of
tokens, and first the draft cache must catch up on every token since it was last used
(on a CPU, a draft decode per token). Probes therefore come from a budget,
PROBE_BUDGET of the time this text has generated so far, so auto never spends much to
find out that the draft model does not pay. Switching to the draft model for good pays
the same catch-up, spread over the tokens still to come. Until the draft model is
measured, its step is assumed to cost the target's step scaled by their parameter counts.

Other load on the machine slows both models and every batch size alike, so the costs
measured less often (big batches, the draft model) follow the single-token step, which
every no-draft round measures: their ratios, which decide, stay as last measured. Where
`spectui plan` has timed this machine's decodes, auto starts from those costs instead.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from spectui.spec_types import AUTO_NGRAM

NGRAM = AUTO_NGRAM
DRAFT = "draft model"  # a role: the session's draft model, head or MTP layer (Session.model_type)
PRIOR_SLOPE = 0.35  # verify cost per extra batch token, relative to T(1), before any measurement
PROBE_START = 24  # rounds a source may stay off before a short probe
PROBE_MAX = 384
PROBE_K = 2  # tokens a probe drafts
PROBE_BUDGET = 0.02  # probes may cost at most this share of the time generated so far
WINDOW = 64  # acceptance observations kept per source and position
EMA = 0.2  # weight of a new timing: reacts to load changes within a few rounds
MIN_GAIN = 1.05  # speculate only for an expected gain of 5% or more: estimates are noisy
DEPTH = 256  # a chat's typical context depth, where no depth is given (the plan's too)
NOTHING_PAYS = "no draft pays"  # a draft was there to make, and none was expected to gain MIN_GAIN


@dataclass(frozen=True)
class Costs:
    """Seconds: verify time by batch size (only measured sizes), one draft-model step,
    and the n-gram lookup."""

    verify: dict[int, float]
    draft_step: float | None
    ngram_lookup: float = 0.0

    def t_verify(self, batch: int) -> float:
        """Measured, or linear through the measured sizes (a prior slope when there is one)."""
        if batch in self.verify:
            return self.verify[batch]
        pts = self._points
        if not pts:
            return float(batch)  # relative units until the first measurement
        mx, my, slope = self._line
        # A bigger batch never costs less than a smaller one measured.
        floor = max((t for b, t in pts if b <= batch), default=1e-9)
        line = my + slope * (batch - mx)
        b_top, t_top = pts[-1]
        if batch > b_top:
            # Past the biggest size measured, no steeper than the prior slope: on a CPU the
            # small batches cost about a step a token and big ones far less, so a line through
            # the small ones alone would rule out ever trying (and timing) a long draft.
            line = min(line, t_top + PRIOR_SLOPE * pts[0][1] * (batch - b_top))
        return max(floor, line)

    @cached_property
    def _points(self) -> list[tuple[int, float]]:
        return sorted(self.verify.items())

    @cached_property
    def _line(self) -> tuple[float, float, float]:
        """(mean size, mean time, slope) of the measured sizes, fitted once per decision."""
        pts = self._points
        if len(pts) == 1:
            b0, t0 = pts[0]
            return b0, t0, t0 / (1 + PRIOR_SLOPE * (b0 - 1)) * PRIOR_SLOPE
        n = len(pts)
        mx = sum(b for b, _ in pts) / n
        my = sum(t for _, t in pts) / n
        sxx = sum((b - mx) ** 2 for b, _ in pts)
        return mx, my, max(0.0, sum((b - mx) * (t - my) for b, t in pts) / sxx)


@dataclass(frozen=True)
class Decision:
    source: str | None  # NGRAM, DRAFT or None (no draft)
    k: int
    gain: float  # expected tokens/s relative to no draft
    reason: str
    probe: bool = False  # drafts to measure the source, not because it is expected to pay


def decide(
    costs: Costs,
    accept: dict[str, list[float]],
    ngram_len: int,
    has_draft: bool,
    n_max: int,
    probe: str | None = None,
    catchup_per_token: float = 0.0,
) -> Decision:
    """The best (source, k) by expected tokens per second.

    `accept[source]` gives per-position conditional acceptance estimates; `ngram_len` is
    the length of the n-gram candidate available this round (0: none), which its own sizes
    bound, as a fixed n-gram type's draft; `n_max` bounds the draft model's; `probe` forces
    a short draft from that source so its acceptance estimate stays current;
    `catchup_per_token` is what bringing the draft cache up to date costs, spread over
    the tokens still to come (charged to the draft model per token it helps produce).
    """
    base = 1.0 / costs.t_verify(1)
    best = Decision(None, 0, MIN_GAIN, NOTHING_PAYS)
    options: list[tuple[str, int, float, float, float]] = []
    if ngram_len > 0:
        options.append((NGRAM, ngram_len, costs.ngram_lookup, 0.0, 0.0))
    if has_draft and costs.draft_step is not None and n_max > 0:
        options.append((DRAFT, n_max, 0.0, costs.draft_step, catchup_per_token))
    for source, k_max, fixed, per_step, per_token in options:
        n, run = 1.0, 1.0  # expected tokens of a k-token draft (module docstring), k by k
        for k, a in enumerate(accept[source][:k_max], start=1):
            run *= a
            n += run
            rate = n / (costs.t_verify(k + 1) + fixed + per_step * k + per_token * n)
            gain = rate / base
            if gain > best.gain:
                best = Decision(source, k, gain, f"expected {gain:.2f}x")
    if probe and best.source != probe and (probe != NGRAM or ngram_len > 0):
        k = min(PROBE_K, n_max, ngram_len if probe == NGRAM else n_max)
        if k > 0:
            return Decision(probe, k, best.gain, f"probe {probe} (best: {best.reason})", probe=True)
    return best


@dataclass
class _Source:
    """Acceptance observations per position and when the source was last used."""

    obs: list[deque] = field(default_factory=list)
    idle: int = 0
    probe_every: int = PROBE_START  # doubles after each probe; back to the start once it pays
    prior: tuple[float, ...] = ()  # per position, what earlier texts left (see forget_text)

    def estimates(self, n: int) -> list[float]:
        """Conditional acceptance per position, each observation window weighed against a
        prior worth two observations. Position 1's prior is a coin flip unless an earlier
        text left one; a later position's, unless left, is the estimate of the one before
        it: once a draft is on track it tends to stay so, and long drafts are only observed
        if they are tried."""
        while len(self.obs) < n:
            self.obs.append(deque(maxlen=WINDOW))
        out, prior = [], 0.5
        for i, o in enumerate(self.obs[:n]):
            prior = self.prior[i] if i < len(self.prior) else prior
            prior = (sum(o) + 2 * prior) / (len(o) + 2)
            out.append(prior)
        return out

    def observe(self, n_tried: int, n_accepted: int) -> None:
        self.estimates(n_tried)
        for i in range(min(n_tried, n_accepted + 1)):
            self.obs[i].append(1 if i < n_accepted else 0)


class _Timed(Protocol):
    @property
    def b(self) -> int: ...


class TimedCosts(Protocol):
    """A cost curve as auto reads it (spectui plan's Curve): decode seconds by batch size and depth."""

    @property
    def target(self) -> Mapping[int, Sequence[_Timed]]: ...

    @property
    def draft(self) -> Mapping[int, Sequence[_Timed]]: ...

    def t(self, b: float, depth: float) -> float: ...

    def t_draft(self, b: float, depth: float) -> float: ...


class Observed(Protocol):
    """A round as auto learns from it (engine/drafting.RoundDraft, passed whole): what was
    drafted and accepted, the target's token after them, the n-gram candidate used or not, and
    the n-gram lookup's and the draft cache's catch-up seconds."""

    tokens: list[int]
    n_acc: int
    nxt: int
    candidate: list[int]
    t_lookup: float
    t_sync: float
    n_synced: int


def auto_costs(curve: TimedCosts, depth: int = DEPTH) -> tuple[dict[int, float], float | None]:
    """What auto may start from (Controller.seed): the target's decode seconds by timed batch
    size, and the draft model's step (None without one)."""
    sizes = sorted({p.b for pts in curve.target.values() for p in pts})
    return {b: curve.t(b, depth) for b in sizes}, (curve.t_draft(1, depth) if curve.draft else None)


def _ema(old: float | None, new: float) -> float:
    return new if old is None else (1 - EMA) * old + EMA * new


class Controller:
    """Keeps the online figures for `decide` and turns rounds into observations.

    `draft_ratio`: the draft model's parameter count over the target's, for the prior
    on the draft's costs; None without a draft model.
    """

    def __init__(self, draft_ratio: float | None = None):
        self.draft_ratio = draft_ratio
        self.verify: dict[int, float] = {}
        self.draft_step: float | None = None  # measured, sync excluded
        self.draft_sync: float | None = None  # per token the draft cache catches up on
        self.prefill: float | None = None  # the target's prompt processing, per token
        self.ngram_lookup = 0.0
        self.elapsed = 0.0  # seconds of rounds observed
        self.probe_spent = 0.0  # what probes cost beyond the no-draft rounds they replaced
        self.sources = {NGRAM: _Source(), DRAFT: _Source()}
        self.open_candidates: list[tuple[list[int], int]] = []  # n-gram candidates, tokens matched so far

    def seed(self, verify: dict[int, float], draft_step: float | None) -> None:
        """Costs timed beforehand on this machine (a cost curve): a better start than the prior
        slope and the parameter ratio. What rounds have measured stays; new timings blend in."""
        self.verify = {**verify, **self.verify}
        if self.draft_step is None and draft_step is not None and self.draft_ratio is not None:
            self.draft_step = draft_step

    def forget_text(self) -> None:
        """A new text (the benchmark's cold runs). Kept: what the machine costs, and how
        often the draft model agrees with the target (a property of the pair more than of
        the text). Started over: n-gram acceptance, which is mostly about the text, so the
        last text's estimates stay only as a prior worth two observations per position
        (how often a long n-gram match continues says something about the model too); and
        the probe budget, so one text never pays for probes budgeted on another's time."""
        old = self.sources[NGRAM]
        self.sources[NGRAM] = _Source(prior=tuple(old.estimates(len(old.obs))))
        self.new_turn()
        self.sources[DRAFT].idle = 0
        self.elapsed = self.probe_spent = 0.0

    def new_turn(self) -> None:
        """Another answer begins: a candidate still open is not scored against its tokens."""
        self.open_candidates = []

    def _draft_step(self) -> float | None:
        if self.draft_step is not None:
            return self.draft_step
        if self.draft_ratio is None or 1 not in self.verify:
            return None
        return self.draft_ratio * self.verify[1]

    def _sync_per_token(self, step: float) -> float:
        if self.draft_sync is not None:
            return self.draft_sync
        if self.prefill is not None and self.draft_ratio is not None:
            return self.draft_ratio * self.prefill
        return 0.25 * step  # a token in a batch costs about a quarter of a single step on a CPU

    def costs(self) -> Costs:
        return Costs(dict(self.verify), self._draft_step(), self.ngram_lookup)

    def _probe_cost(self, draft_behind: int, step: float) -> float:
        """Expected extra seconds of a draft-model probe: catching up, PROBE_K steps of
        `step` seconds, the larger verify batch."""
        c = self.costs()
        return draft_behind * self._sync_per_token(step) + PROBE_K * step + c.t_verify(PROBE_K + 1) - c.t_verify(1)

    def choose(
        self,
        ngram_len: int,
        has_draft: bool,
        n_max: int,
        draft_behind: Callable[[], int] = lambda: 0,
        tokens_left: int | None = None,
        tokens_done: int = 0,
    ) -> Decision:
        """`draft_behind` counts the tokens the draft cache would have to catch up on;
        `tokens_left` is how many the answer may still take (None: unknown, then taken to
        be as many as the `tokens_done` so far, at least PROBE_START)."""
        if n_max <= 0 and ngram_len <= 0:  # "no room" only where a draft model is held back by the room left
            return Decision(None, 0, 1.0, "no room to draft" if has_draft else "no n-gram match")
        # n-gram estimates stay current for free (see observe); the draft model needs probes.
        src = self.sources[DRAFT]
        step = self._draft_step() if has_draft and n_max > 0 else None
        behind = draft_behind() if step is not None else 0
        probe = None
        if step is not None and src.idle >= src.probe_every:
            if self.probe_spent + self._probe_cost(behind, step) <= PROBE_BUDGET * self.elapsed:
                probe = DRAFT
        catchup = 0.0
        if behind and step is not None:  # (behind is 0 without a step)
            left = tokens_left if tokens_left is not None else max(tokens_done, PROBE_START)
            catchup = behind * self._sync_per_token(step) / max(left, 1)
        accept = {NGRAM: self.sources[NGRAM].estimates(ngram_len), DRAFT: src.estimates(n_max)}
        d = decide(self.costs(), accept, ngram_len, has_draft, n_max, probe, catchup)
        if d.probe:
            src.probe_every = min(PROBE_MAX, src.probe_every * 2)
        elif d.source == DRAFT:
            src.probe_every = PROBE_START  # it pays again: probe soon after it stops paying
        return d

    def _follow_load(self, factor: float) -> None:
        """The single-token step changed by `factor`: scale what is measured less often."""
        self.verify = {b: t if b == 1 else t * factor for b, t in self.verify.items()}
        if self.draft_step is not None:
            self.draft_step *= factor
        if self.draft_sync is not None:
            self.draft_sync *= factor
        if self.prefill is not None:
            self.prefill *= factor

    def observe_prefill(self, n_tokens: int, seconds: float) -> None:
        """The target's prompt processing: with the parameter ratio, the prior on what
        catching up the draft cache costs."""
        if n_tokens >= 32:
            self.prefill = _ema(self.prefill, seconds / n_tokens)

    def observe(self, decision: Decision, dr: Observed, t_round_draft: float, t_verify: float) -> None:
        """One round (`dr`, which `decision` drafted): `t_round_draft` is its drafting time, the
        n-gram lookup (dr.t_lookup) and the draft model's time including dr.t_sync, the time its
        cache took to catch up on dr.n_synced tokens."""
        n_drafted, n_accepted, t_lookup, t_sync = len(dr.tokens), dr.n_acc, dr.t_lookup, dr.t_sync
        t_draft, ngram_candidate, emitted = t_round_draft - t_lookup, dr.candidate, dr.tokens[:n_accepted] + [dr.nxt]
        t_single = self.verify.get(1)
        b = n_drafted + 1
        self.verify[b] = _ema(self.verify.get(b), t_verify)
        if b == 1 and t_single is not None:
            self._follow_load(self.verify[1] / t_single)
        self.ngram_lookup = _ema(self.ngram_lookup, t_lookup)
        self.elapsed += t_lookup + t_draft + t_verify
        for name, src in self.sources.items():
            src.idle = 0 if decision.source == name and n_drafted else src.idle + 1
        if decision.probe and t_single is not None:
            self.probe_spent += t_draft + t_verify - (n_accepted + 1) * t_single
        if decision.source == DRAFT and n_drafted:
            self.draft_step = _ema(self.draft_step, (t_draft - t_sync) / n_drafted)
            if dr.n_synced:  # a catch-up timed apart (drafters/draft_model.py: SYNC_APART tokens or more)
                self.draft_sync = _ema(self.draft_sync, t_sync / dr.n_synced)
            self.sources[DRAFT].observe(n_drafted, n_accepted)
        self._score_candidates(ngram_candidate, emitted)

    def _score_candidates(self, candidate: list[int], emitted: list[int]) -> None:
        """Free counterfactual: each n-gram candidate, used or not, is scored against the tokens
        the target went on to produce, over as many rounds as that takes, so every position
        of it is observed, not only those drafted (copied code matches long or not at all)."""
        if candidate:
            self.open_candidates.append((list(candidate), 0))
        still_open = []
        for cand, n in self.open_candidates:
            for token in emitted:
                if token != cand[n]:
                    self.sources[NGRAM].observe(n + 1, n)
                    break
                n += 1
                if n == len(cand):
                    self.sources[NGRAM].observe(n, n)
                    break
            else:
                still_open.append((cand, n))
        self.open_candidates = still_open
