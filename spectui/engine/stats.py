"""Statistics over engine events, as pure functions (llama.cpp's definitions).

Everything here is computed from the events in events.py alone, so the TUI, `spectui run`
and the benchmark report the same numbers. Undefined quantities (a rate with nothing to
divide by, a latency with no tokens) are None, never an exception.

Inter-token latency (ITL), the one definition used here: a round that emits m tokens
after a gap g since the previous token arrival contributes m samples of g / m (tokens
that arrive together share the wait evenly; percentiles are weighted per token). The
previous arrival of the first round is PromptDone.t, so prompt processing belongs to
the time to first token, not to ITL. Per-round latency is the gap between consecutive
round ends (the first from PromptDone.t), one sample per round.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from spectui.engine.events import Event, PromptDone, Round, StopReason, TurnEnd, TurnStart


def rounds_of(events: Iterable[Event]) -> list[Round]:
    return [e for e in events if isinstance(e, Round)]


def _rate(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def acceptance(rounds: Sequence[Round]) -> tuple[int, int, float | None]:
    """(accepted, drafted, accepted/drafted) over draft tokens; empty drafts add nothing."""
    n_accepted = sum(r.n_accepted for r in rounds)
    n_drafted = sum(r.n_drafted for r in rounds)
    return n_accepted, n_drafted, _rate(n_accepted, n_drafted)


def rolling_acceptance(rounds: Sequence[Round], n: int = 32) -> tuple[int, int, float | None]:
    """acceptance() over the last n rounds (rounds, not drafts: empty ones use up the window)."""
    if n < 1:
        raise ValueError(f"window must be at least 1 round, got {n}")
    return acceptance(rounds[-n:])


def mean_acceptance_length(rounds: Sequence[Round]) -> float | None:
    """1 + accepted / verification rounds (vLLM); empty-draft rounds count, each yields 1."""
    if not rounds:
        return None
    return 1 + sum(r.n_accepted for r in rounds) / len(rounds)


def per_position_acceptance(rounds: Sequence[Round]) -> list[float]:
    """Rate at draft position i: rounds accepting it / rounds drafting at least i+1 tokens.

    Acceptance is a prefix, so position i is accepted exactly when n_accepted > i.
    """
    longest = max((r.n_drafted for r in rounds), default=0)
    return [sum(r.n_accepted > i for r in rounds) / sum(r.n_drafted > i for r in rounds) for i in range(longest)]


@dataclass(frozen=True)
class TypeCounters:
    """llama.cpp's per-implementation counters: #gen drafts, #acc drafts, #gen tokens,
    #acc tokens, and the draft / verify seconds of the rounds attributed to the type."""

    gen_drafts: int = 0
    acc_drafts: int = 0
    gen_tokens: int = 0
    acc_tokens: int = 0
    t_draft_s: float = 0.0
    t_verify_s: float = 0.0

    def add(self, r: Round) -> TypeCounters:
        return TypeCounters(
            self.gen_drafts + (r.n_drafted > 0),
            self.acc_drafts + (r.n_drafted > 0 and r.n_accepted > 0),
            self.gen_tokens + r.n_drafted,
            self.acc_tokens + r.n_accepted,
            self.t_draft_s + r.t_draft,
            self.t_verify_s + r.t_verify,
        )


def per_type(rounds: Sequence[Round]) -> dict[str, TypeCounters]:
    """Counters keyed by each round's own spec_type, since the type can change mid-turn.

    Rounds with spec_type None (nothing drafted, no drafter to credit) are not attributed.
    """
    out: dict[str, TypeCounters] = {}
    for r in rounds:
        if r.spec_type is not None:
            out[r.spec_type] = out.get(r.spec_type, TypeCounters()).add(r)
    return out


def config_changes(rounds: Sequence[Round]) -> list[int]:
    """Positions in `rounds` whose configuration (spec types in force, n_max, verify) differs
    from the round before; which type happened to draft is not a configuration change."""
    key = [(r.configured, r.n_max, r.verify) for r in rounds]
    return [i for i in range(1, len(key)) if key[i] != key[i - 1]]


def speedup(tok_per_s: float | None, baseline_tok_per_s: float | None) -> float | None:
    """How many times faster than the baseline (e.g. the same prompt with spec type none)."""
    if tok_per_s is None or baseline_tok_per_s is None:
        return None
    return _rate(tok_per_s, baseline_tok_per_s)


def first_divergence(a: Sequence[int], b: Sequence[int]) -> int | None:
    """Index of the first differing token; the shorter length if one is a prefix; None if equal
    (the benchmark's greedy agreement and the TUI's A/B verdict)."""
    a, b = tuple(a), tuple(b)
    if a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """numpy's default ("linear") percentile q of ascending, non-empty `ordered`. In pure
    Python: the chat's panel takes these mid-answer, and numpy's first np.percentile in a
    process imports numpy.ma, UI time taken from the answer's decode."""
    rank = (len(ordered) - 1) * q / 100
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def p50_p95(samples: Sequence[float]) -> tuple[float | None, float | None]:
    """The median and the 95th percentile (numpy's linear method); None, None for no samples."""
    if len(samples) == 0:
        return None, None
    ordered = sorted(samples)
    return _percentile(ordered, 50), _percentile(ordered, 95)


def token_latencies(rounds: Sequence[Round], start: float | None) -> list[float]:
    """One ITL sample per emitted token (see the module docstring); `start` is PromptDone.t."""
    out: list[float] = []
    prev = start
    for r in rounds:
        if r.tokens:
            if prev is not None:
                out += [(r.t - prev) / len(r.tokens)] * len(r.tokens)
            prev = r.t
    return out


def round_latencies(rounds: Sequence[Round], start: float | None) -> list[float]:
    """Gap between consecutive round ends, the first measured from `start` (PromptDone.t)."""
    ends = ([] if start is None else [start]) + [r.t for r in rounds]
    return [b - a for a, b in zip(ends, ends[1:])]


@dataclass(frozen=True)
class TurnTiming:
    ttft_s: float | None
    tok_per_s: float | None  # emitted tokens / (last round end - PromptDone.t)
    tok_per_s_e2e: float | None  # emitted tokens / (TurnEnd.t or last round end - TurnStart.t)
    itl_p50_s: float | None
    itl_p95_s: float | None
    round_p50_s: float | None
    round_p95_s: float | None
    t_draft_s: float
    t_verify_s: float
    t_other_s: float
    # Generation time outside llama.cpp per round (drafting logic, verification, the
    # consumer between rounds): what a fast GPU step cannot hide. None before a round ends.
    overhead_ms_per_round: float | None = None


def _first(events: Sequence[Event], kind: type) -> float | None:
    """The time of the first event of this kind, if any."""
    return next((e.t for e in events if isinstance(e, kind)), None)


def timing(events: Sequence[Event]) -> TurnTiming:
    """Latency and throughput of one turn; works on a turn still in progress (no TurnEnd)."""
    rounds = rounds_of(events)
    t_start, t_gen = _first(events, TurnStart), _first(events, PromptDone)
    t_end = _first(events, TurnEnd)
    n = sum(len(r.tokens) for r in rounds)
    last = rounds[-1].t if rounds else None
    first_token = next((r.t for r in rounds if r.tokens), None)
    finish = t_end if t_end is not None else last
    itl = p50_p95(token_latencies(rounds, t_gen))
    per_round = p50_p95(round_latencies(rounds, t_gen))
    return TurnTiming(
        ttft_s=None if t_start is None or first_token is None else first_token - t_start,
        tok_per_s=None if t_gen is None or last is None else _rate(n, last - t_gen),
        tok_per_s_e2e=None if t_start is None or finish is None else _rate(n, finish - t_start),
        itl_p50_s=itl[0],
        itl_p95_s=itl[1],
        round_p50_s=per_round[0],
        round_p95_s=per_round[1],
        t_draft_s=sum(r.t_draft for r in rounds),
        t_verify_s=sum(r.t_verify for r in rounds),
        t_other_s=sum(r.t_other for r in rounds),
        overhead_ms_per_round=None
        if t_gen is None or last is None or not rounds
        # never below 0: a server's own timings can exceed the wall clock a little
        else max(0.0, 1000 * ((last - t_gen) - sum(r.t_llama for r in rounds)) / len(rounds)),
    )


@dataclass(frozen=True)
class TurnSummary:
    n_generated: int  # tokens emitted by the rounds (TurnEnd.n_generated is not consulted)
    n_drafted: int
    n_accepted: int
    acceptance_rate: float | None
    mean_acceptance_length: float | None
    rounds: int
    per_position: tuple[float, ...]
    per_type: dict[str, TypeCounters]
    timing: TurnTiming
    stop_reason: StopReason | None  # None while the turn is still running
    spec_types: tuple[str, ...]  # in order of first use

    def as_dict(self) -> dict:
        """Flat, JSON-serialisable view (the benchmark and `spectui run --json` write it)."""
        return {
            "n_generated": self.n_generated,
            "n_drafted": self.n_drafted,
            "n_accepted": self.n_accepted,
            "acceptance_rate": self.acceptance_rate,
            "mean_acceptance_length": self.mean_acceptance_length,
            "rounds": self.rounds,
            **asdict(self.timing),
            "per_position": list(self.per_position),
            "per_type": {k: asdict(v) for k, v in self.per_type.items()},
            "stop_reason": None if self.stop_reason is None else self.stop_reason.value,
            "spec_types": list(self.spec_types),
        }


def summarize(events: Sequence[Event]) -> TurnSummary:
    """Everything above for one turn (TurnStart .. TurnEnd, or a prefix of it)."""
    if sum(isinstance(e, TurnStart) for e in events) > 1:
        raise ValueError("summarize() takes the events of one turn; split them at TurnStart")
    rounds = rounds_of(events)
    n_accepted, n_drafted, rate = acceptance(rounds)
    end = next((e for e in events if isinstance(e, TurnEnd)), None)
    return TurnSummary(
        n_generated=sum(len(r.tokens) for r in rounds),
        n_drafted=n_drafted,
        n_accepted=n_accepted,
        acceptance_rate=rate,
        mean_acceptance_length=mean_acceptance_length(rounds),
        rounds=len(rounds),
        per_position=tuple(per_position_acceptance(rounds)),
        per_type=per_type(rounds),
        timing=timing(events),
        stop_reason=end.stop_reason if end else None,
        spec_types=tuple(dict.fromkeys(r.spec_type for r in rounds if r.spec_type is not None)),
    )
