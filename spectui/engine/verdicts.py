"""What the verifier saw at each drafted position, when a session inspects.

UI-free: a Round carries its verdicts, and the chat, `spectui run`, the bench, traces and the
HTML export read them through the helpers here, so every view reports the same numbers.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from spectui.llama import sampling as smp

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
    acceptance: float | None  # rejection sampling: min(1, p/q) with the verifier's q; None otherwise
    draw: float | None  # rejection sampling: the uniform draw compared with the acceptance; None otherwise
    accepted: bool
    top: tuple[tuple[int, float], ...] = ()  # at the first rejected position only: the target's top 3 (id, p)
    emitted: int | None = None  # at the first rejected position: the token emitted instead
    top_text: tuple[str, ...] = ()  # the text of each of `top` alone (views without the vocabulary show it)
    text: str = ""  # the drafted token's text alone
    emitted_p: float | None = None  # at the first rejected position: the target's p of `emitted`, as p is taken
    # (None elsewhere, and in traces older than version 3)


class _Judged(Protocol):
    """A Round, or anything else that carries verdicts (events.py imports this module)."""

    @property
    def verdicts(self) -> tuple[Verdict, ...]: ...


class _Drafted(Protocol):
    """A round's draft once verified (engine/drafting.py's RoundDraft)."""

    tokens: list[int]
    q_rows: list | None
    q_probs: list[float] | None
    n_acc: int
    nxt: int


def judged(
    dr: _Drafted, rows: Sequence, draws: list[float] | None, greedy: bool, piece: Callable[[int], bytes]
) -> tuple[Verdict, ...]:
    """The verdict at each judged draft position, from the values the verifier read: at greedy
    the full softmax of the logits `rows`; otherwise the distributions `rows` the verifier
    sampled from, with rejection sampling's `draws` (None under sample-and-match, which
    compares no draw). The first rejected position also gets the target's top 3 and the token
    emitted instead, with its p."""
    out = []
    for i, x in enumerate(dr.tokens[: dr.n_acc + 1]):
        accepted = i < dr.n_acc
        n_top = 0 if accepted else 3
        if greedy:
            p, top = smp.softmax_at(rows[i], x, n_top)
            # the emitted token is the argmax, top[0]: no second pass over the vocabulary
            emitted_p = None if accepted else dict(top).get(dr.nxt) or smp.softmax_at(rows[i], dr.nxt)[0]
        else:
            p, top = float(rows[i][x]), smp.top_of(rows[i], n_top) if n_top else ()
            emitted_p = None if accepted else float(rows[i][dr.nxt])
        own = float(dr.q_rows[i][x]) if dr.q_rows is not None else None  # the verifier's q (None: one-hot)
        q = own if own is not None else dr.q_probs[i] if dr.q_probs and i < len(dr.q_probs) else None
        out.append(
            Verdict(
                position=i,
                token=x,
                p=p,
                q=q,
                acceptance=None if draws is None else smp.acceptance(p, 1.0 if own is None else own),
                draw=None if draws is None else draws[i],
                accepted=accepted,
                top=top,
                emitted=None if accepted else dr.nxt,
                top_text=tuple(piece(t).decode("utf-8", "replace") for t, _ in top),
                text=piece(x).decode("utf-8", "replace"),
                emitted_p=emitted_p,
            )
        )
    return tuple(out)


def facts(v: Verdict, verify: str, emitted_text: str | None = None) -> list[str]:
    """A verdict in lines of text, the same wherever it shows (the chat's and the replay's
    inspector, the HTML export's tooltips): the decision by the rule of the round's `verify`,
    p and q, under rejection sampling the draw against the acceptance that decided, and at a
    rejection the target's top 3 and the token emitted instead (`emitted_text`: its text,
    where the caller has it). Sample-and-match compares no draw: the target sampled a token of
    its own, so its lines name that token and its p instead."""
    lines = [_decision(v, verify), f"p {v.p:.3f}" + ("" if v.q is None else f" · q {v.q:.3f}")]
    if verify == "rejection" and v.acceptance is not None and v.draw is not None:
        lines.append(_comparison(v.draw, v.acceptance))
    if v.top:
        texts = v.top_text or tuple(f"#{t}" for t, _ in v.top)
        lines.append("target's top 3: " + " · ".join(f"{t!r} {p:.3f}" for t, (_, p) in zip(texts, v.top)))
    if v.emitted is not None:
        known = next((t for t, (i, _) in zip(v.top_text, v.top) if i == v.emitted), f"#{v.emitted}")
        shown = repr(emitted_text if emitted_text is not None else known)
        why = " (a near-tie)" * near_tie(v) + " (a confident draft error)" * confident_error(v)
        if verify == "match":
            p = v.emitted_p if v.emitted_p is not None else dict(v.top).get(v.emitted)
            shown += "" if p is None else f" (p {p:.3f})"
            lines.append(f"the target sampled {shown} and emitted it instead{why}")
        else:
            lines.append(f"emitted {shown} instead{why}")
    return lines


def _decision(v: Verdict, verify: str) -> str:
    """Accepted or rejected, and by which rule the round's verification decides."""
    if verify == "rejection":  # accepted when the draw is below the acceptance, min(1, p/q)
        why = "the draw was below the acceptance" if v.accepted else "the draw was not below the acceptance"
    elif verify == "match":  # the target samples its own token, which must be the drafted one
        why = "the target sampled its own token: " + ("the same one" if v.accepted else "a different one")
    else:
        why = "the target's own choice" if v.accepted else "the target chose another token"
    return f"{'accepted' if v.accepted else 'rejected'}: {why}"


def _comparison(draw: float, acceptance: float) -> str:
    """ "draw 0.175 < acceptance 0.577", or ≥: with as many decimals as it takes for the two
    shown numbers to compare as the exact ones do (in full, as repr, where 17 cannot tell)."""

    def shown(n: int) -> tuple[str, str]:
        return f"{draw:.{n}f}", f"{acceptance:.{n}f}"

    pair = next((s for n in range(3, 18) if (s := shown(n))[0] != s[1]), None)
    if pair is None:
        pair = shown(3) if draw == acceptance else (repr(draw), repr(acceptance))
    return f"draw {pair[0]} {'<' if draw < acceptance else '≥'} acceptance {pair[1]}"


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
