"""What the verifier saw at each drafted position, when a session inspects (issue 36).

UI-free: a Round carries its verdicts, and the chat, `spectui run`, the bench, traces and the
HTML export read them through the helpers here, so every view reports the same numbers.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

NEAR_TIE = 0.1  # a rejection the target's top-1 won by less than this margin is a near-tie
CONFIDENT_Q = 0.8  # a draft at least this sure of its token ...
CONFIDENT_P = 0.1  # ... which the target gave less than this is a confident draft error


@dataclass(frozen=True)
class Verdict:
    """What the verifier saw at one drafted position."""

    position: int  # index in the round's draft (0-based)
    token: int  # the drafted token id
    p: float  # the target's probability of it as verified (sampling chain at temp > 0; full softmax at greedy)
    q: float | None  # the draft's own probability (model-based types), else None
    acceptance: float | None  # min(1, p/q) at temp > 0 with a q; None otherwise
    draw: float | None  # the uniform draw that decided, at temp > 0; None otherwise
    accepted: bool
    top: tuple[tuple[int, float], ...] = ()  # at the first rejected position only: the target's top 3 (id, p)
    emitted: int | None = None  # at the first rejected position: the token emitted instead
    top_text: tuple[str, ...] = ()  # the text of each of `top` alone (views without the vocabulary show it)
    text: str = ""  # the drafted token's text alone


class _Judged(Protocol):
    """A Round, or anything else that carries verdicts (events.py imports this module)."""

    @property
    def verdicts(self) -> tuple[Verdict, ...]: ...


def facts(v: Verdict, emitted_text: str | None = None) -> list[str]:
    """A verdict in lines of text, the same wherever it shows (the HTML export's tooltips):
    p and q; at temperature the acceptance and the draw; at a rejection the target's top 3
    and the token emitted instead (`emitted_text`: its text, where the caller has it)."""
    lines = [f"p {v.p:.3f}" + ("" if v.q is None else f" · q {v.q:.3f}")]
    if v.acceptance is not None and v.draw is not None:
        lines.append(f"acceptance {v.acceptance:.3f} · draw {v.draw:.3f}")
    if v.top:
        texts = v.top_text or tuple(f"#{t}" for t, _ in v.top)
        lines.append("target's top 3: " + " · ".join(f"{t!r} {p:.3f}" for t, (_, p) in zip(texts, v.top)))
    if v.emitted is not None:
        known = next((t for t, (i, _) in zip(v.top_text, v.top) if i == v.emitted), f"#{v.emitted}")
        why = " (a near-tie)" * near_tie(v) + " (a confident draft error)" * confident_error(v)
        lines.append(f"emitted {emitted_text if emitted_text is not None else known!r} instead{why}")
    return lines


def near_tie(v: Verdict) -> bool:
    """Rejected, and the target's first choice beat its second by less than NEAR_TIE."""
    return not v.accepted and len(v.top) >= 2 and v.top[0][1] - v.top[1][1] < NEAR_TIE


def confident_error(v: Verdict) -> bool:
    """Rejected although the draft was sure of it: q > CONFIDENT_Q where the target gave p < CONFIDENT_P."""
    return not v.accepted and v.q is not None and v.q > CONFIDENT_Q and v.p < CONFIDENT_P


def rejections(rounds: Iterable[_Judged]) -> list[Verdict]:
    """The verdict at each round's first rejected position (the others were never judged)."""
    return [v for r in rounds for v in r.verdicts if not v.accepted]


def summarize(rounds: Iterable[_Judged]) -> tuple[int, int, int, float | None]:
    """(rejections, near-ties, confident draft errors, median p of the rejected draft tokens;
    None without a rejection) over rounds that carry verdicts."""
    rejected = rejections(rounds)
    median = statistics.median(v.p for v in rejected) if rejected else None
    return len(rejected), sum(map(near_tie, rejected)), sum(map(confident_error, rejected)), median


def summary_dict(rounds: Iterable[_Judged]) -> dict:
    """summarize() as `spectui run --json` and the bench's JSON name it."""
    n, ties, errors, median = summarize(rounds)
    return {"rejections": n, "near_ties": ties, "confident_errors": errors, "median_rejected_p": median}
