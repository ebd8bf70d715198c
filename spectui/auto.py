"""`--spec-type auto`: choose, before every round, what to draft and how much.

Speculation pays only when the expected tokens per round outgrow what the round costs.
Both sides are measured online on this machine: the target's verify time as a function
of batch size, the draft model's step time, and acceptance per position for each source.
`decide` is a pure function of those figures; `Controller` keeps the figures.

Expected tokens of a k-token draft with conditional acceptance a_1..a_k (a_i: position i
accepted given 1..i-1 were) = 1 + sum_i prod_{j<=i} a_j; its cost = T(k+1) + draft cost.
The choice maximises tokens per second; "none" is 1 / T(1).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

NGRAM = "ngram-simple"
DRAFT = "draft-simple"
PRIOR_SLOPE = 0.35  # verify cost per extra batch token, relative to T(1), before any measurement
PROBE_START = 24  # rounds a source may stay off before a short probe
PROBE_MAX = 384
WINDOW = 64  # acceptance observations kept per source and position
EMA = 0.2  # weight of a new timing: reacts to load changes within a few rounds
MIN_GAIN = 1.05  # speculate only for an expected gain of 5% or more: estimates are noisy


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
        pts = sorted(self.verify.items())
        if not pts:
            return float(batch)  # relative units until the first measurement
        if len(pts) == 1:
            b0, t0 = pts[0]
            t1 = t0 / (1 + PRIOR_SLOPE * (b0 - 1))
            return t1 * (1 + PRIOR_SLOPE * (batch - 1))
        n = len(pts)
        mx = sum(b for b, _ in pts) / n
        my = sum(t for _, t in pts) / n
        sxx = sum((b - mx) ** 2 for b, _ in pts)
        slope = max(0.0, sum((b - mx) * (t - my) for b, t in pts) / sxx)
        # A bigger batch never costs less than a smaller one measured.
        floor = max((t for b, t in pts if b <= batch), default=1e-9)
        return max(floor, my + slope * (batch - mx))


@dataclass(frozen=True)
class Decision:
    source: str | None  # NGRAM, DRAFT or None (no draft)
    k: int
    gain: float  # expected tokens/s relative to no draft
    reason: str


def expected_tokens(accept: list[float], k: int) -> float:
    total, run = 1.0, 1.0
    for a in accept[:k]:
        run *= a
        total += run
    return total


def decide(costs: Costs, accept: dict[str, list[float]], ngram_len: int, has_draft: bool, n_max: int,
           probe: str | None = None) -> Decision:
    """The best (source, k) by expected tokens per second.

    `accept[source]` gives per-position conditional acceptance estimates; `ngram_len` is
    the length of the n-gram candidate available this round (0: none); `probe` forces a
    short draft from that source so its acceptance estimate stays current.
    """
    base = 1.0 / costs.t_verify(1)
    best = Decision(None, 0, MIN_GAIN, "no draft pays")
    options = []
    if ngram_len > 0:
        options.append((NGRAM, min(ngram_len, n_max), costs.ngram_lookup, 0.0))
    if has_draft and costs.draft_step is not None:
        options.append((DRAFT, n_max, 0.0, costs.draft_step))
    elif has_draft:
        probe = probe or DRAFT  # never measured: try it once
    for source, k_max, fixed, per_step in options:
        for k in range(1, k_max + 1):
            rate = expected_tokens(accept[source], k) / (costs.t_verify(k + 1) + fixed + per_step * k)
            gain = rate / base
            if gain > best.gain:
                best = Decision(source, k, gain, f"expected {gain:.2f}x")
    if probe and best.source != probe and (probe != NGRAM or ngram_len > 0):
        k = min(2, n_max, ngram_len if probe == NGRAM else n_max)
        if k > 0:
            return Decision(probe, k, best.gain, f"probe {probe} (best: {best.reason})")
    return best


@dataclass
class _Source:
    """Acceptance observations per position and when the source was last used."""

    obs: list[deque] = field(default_factory=list)
    idle: int = 0
    probe_every: int = PROBE_START  # doubles after each probe; back to the start once it pays

    def estimates(self, n: int) -> list[float]:
        while len(self.obs) < n:
            self.obs.append(deque(maxlen=WINDOW))
        # Beta(1, 1) prior: an unseen position counts as a coin flip.
        return [(sum(o) + 1) / (len(o) + 2) for o in self.obs[:n]]

    def observe(self, n_tried: int, n_accepted: int) -> None:
        self.estimates(n_tried)
        for i in range(min(n_tried, n_accepted + 1)):
            self.obs[i].append(1 if i < n_accepted else 0)


class Controller:
    """Keeps the online figures for `decide` and turns rounds into observations."""

    def __init__(self):
        self.verify: dict[int, float] = {}
        self.draft_step: float | None = None
        self.ngram_lookup = 0.0
        self.sources = {NGRAM: _Source(), DRAFT: _Source()}

    def costs(self) -> Costs:
        return Costs(dict(self.verify), self.draft_step, self.ngram_lookup)

    def choose(self, ngram_len: int, has_draft: bool, n_max: int) -> Decision:
        if n_max <= 0:
            return Decision(None, 0, 1.0, "n-max 0")
        # n-gram estimates stay current for free (see observe); the draft model needs probes.
        src = self.sources[DRAFT]
        probe = DRAFT if has_draft and src.idle >= src.probe_every else None
        accept = {name: src.estimates(n_max) for name, src in self.sources.items()}
        d = decide(self.costs(), accept, ngram_len, has_draft, n_max, probe)
        if d.reason.startswith("probe"):
            src.probe_every = min(PROBE_MAX, src.probe_every * 2)
        elif d.source == DRAFT:
            src.probe_every = PROBE_START  # it pays again: probe soon after it stops paying
        return d

    def observe(self, decision: Decision, n_drafted: int, n_accepted: int, t_draft: float, t_verify: float,
                t_lookup: float, ngram_candidate: list[int], emitted: list[int]) -> None:
        b = n_drafted + 1
        old = self.verify.get(b)
        self.verify[b] = t_verify if old is None else (1 - EMA) * old + EMA * t_verify
        self.ngram_lookup = (1 - EMA) * self.ngram_lookup + EMA * t_lookup
        for name, src in self.sources.items():
            src.idle = 0 if decision.source == name and n_drafted else src.idle + 1
        if decision.source == DRAFT and n_drafted:
            step = t_draft / n_drafted
            self.draft_step = step if self.draft_step is None else (1 - EMA) * self.draft_step + EMA * step
            src = self.sources[DRAFT]
            src.observe(n_drafted, n_accepted)
        if decision.source == NGRAM and n_drafted:
            self.sources[NGRAM].observe(n_drafted, n_accepted)
        elif ngram_candidate:
            # Free counterfactual: how much of the unused n-gram candidate matched what the
            # target produced (positions past the emitted tokens stay unknown).
            n_match = 0
            for a, b in zip(ngram_candidate, emitted):
                if a != b:
                    break
                n_match += 1
            self.sources[NGRAM].observe(min(len(ngram_candidate), len(emitted)), n_match)
