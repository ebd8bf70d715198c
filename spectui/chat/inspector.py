"""The token inspector: a cursor over one answer's tokens, and what its panel says of the
token under it (why a draft was accepted or rejected). Built from the answer's rounds alone,
so the chat and `spectui replay` show the same facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spectui.engine import verdicts
from spectui.engine.events import Round
from spectui.engine.overlay import LEGEND, REJECTED
from spectui.engine.verdicts import CONFIDENT_P, CONFIDENT_Q, NEAR_TIE, Verdict, summarize
from spectui.words import plural

NO_DATA = "no inspect data for this answer"
SHOWN_CHARS = 40  # a longer rejected draft is cut in the panel (f11 shows it whole)

# What a stop is in its round: a drafted token the target accepted, the rejected tail of a
# draft, the target's token that replaced it, the bonus after a fully accepted draft, or the
# target's own token in a round that drafted nothing.
ACCEPTED, REJECTED_DRAFT, REPLACED, BONUS, OWN = "accepted", "rejected", "replaced", "bonus", "own"


@dataclass(frozen=True)
class Stop:
    """One place the cursor rests: an emitted token, or a round's rejected draft (one stop
    for the whole tail; its verdict is the first rejected position's, the only one judged)."""

    start: int  # offsets into the answer's overlay text (rejected drafts included), as its segments
    end: int
    text: str
    kind: str  # the overlay's kind: draft, ngram, target, resampled or rejected
    role: str  # ACCEPTED, REJECTED_DRAFT, REPLACED, BONUS or OWN
    round: Round
    verdict: Verdict | None  # None: not drafted (BONUS, OWN), or not inspected


def stops(rounds: Sequence[Round]) -> list[Stop]:
    """The answer's stops in order, at the offsets LiveTurn's segments give them."""
    out: list[Stop] = []
    pos = 0

    def add(text: str, kind: str, role: str, r: Round, verdict: Verdict | None) -> None:
        nonlocal pos
        out.append(Stop(pos, pos + len(text), text, kind, role, r, verdict))
        pos += len(text)

    for r in rounds:
        judged = {v.position: v for v in r.verdicts}
        for i, token in enumerate(r.tokens[: r.n_accepted]):
            add(token.piece, token.source.value, ACCEPTED, r, judged.get(i))
        rejection = judged.get(r.n_accepted) if r.rejected else None
        if r.rejected:
            add(r.rejected_text, REJECTED, REJECTED_DRAFT, r, rejection)
        last = REPLACED if r.rejected else BONUS if r.n_drafted else OWN
        for token in r.tokens[r.n_accepted :]:  # the target's token
            add(token.piece, token.source.value, last, r, rejection)
    return out


class Cursor:
    """The inspector's place in one answer: moves token by token, or from one rejected
    draft to the next."""

    def __init__(self, rounds: Sequence[Round], at_round: int | None = None):
        """On the answer's last token, or on the first stop of the round indexed `at_round`."""
        self.rounds = list(rounds)
        self.stops = stops(self.rounds)
        self.n_rejected = sum(s.kind == REJECTED for s in self.stops)
        self.n_tokens = len(self.stops) - self.n_rejected  # the answer's: a rejected draft is none of them
        self.inspected = any(r.verdicts for r in self.rounds)
        self.at = max(len(self.stops) - 1, 0)
        if at_round is not None:
            self.at = next((i for i, s in enumerate(self.stops) if s.round.index == at_round), self.at)

    @property
    def stop(self) -> Stop | None:
        return self.stops[self.at] if self.stops else None

    def counts(self) -> tuple[int, int]:
        """The answer's tokens and the rejected drafts up to the cursor, its own stop included."""
        rejected = sum(s.kind == REJECTED for s in self.stops[: self.at + 1])
        return min(self.at + 1, len(self.stops)) - rejected, rejected

    def move(self, n: int) -> bool:
        """n tokens on (back, when negative), stopping at the ends; False when it did not move."""
        at = min(max(self.at + n, 0), max(len(self.stops) - 1, 0))
        moved, self.at = at != self.at, at
        return moved

    def jump_rejected(self, direction: int) -> bool:
        """To the next (1) or previous (-1) rejected draft; False when there is none that way."""
        ahead = range(self.at + 1, len(self.stops)) if direction > 0 else range(self.at - 1, -1, -1)
        found = next((i for i in ahead if self.stops[i].kind == REJECTED), None)
        if found is not None:
            self.at = found
        return found is not None


def summary_line(rounds: Sequence[Round]) -> str:
    """The answer's rejections and what kind they were; NO_DATA without verdicts."""
    if not any(r.verdicts for r in rounds):
        return NO_DATA
    n, ties, errors, _ = summarize(rounds)
    return rejection_kinds(n, ties, errors)


def rejection_kinds(n: int, ties: int, errors: int, brief: bool = False) -> str:
    """ "N rejections: K near-ties (...), M confident draft errors (...)"; `brief`: without
    the thresholds (an answer's meta line)."""
    tie_rule = "" if brief else f" (top-1 - top-2 < {NEAR_TIE:g})"
    error_rule = "" if brief else f" (q > {CONFIDENT_Q:g}, p < {CONFIDENT_P:g})"
    return (
        f"{plural(n, 'rejection')}: {plural(ties, 'near-tie')}{tie_rule}, "
        f"{plural(errors, 'confident draft error')}{error_rule}"
    )


def saved_kinds(stats: dict) -> str | None:
    """An inspected answer's kinds of rejection, brief, from its saved stats (LiveTurn keeps
    them as `inspect`); None when it was not inspected, or the saved counts are not counts."""
    kinds = stats.get("inspect")
    if not isinstance(kinds, dict):
        return None
    n, ties, errors = (kinds.get(k) for k in ("rejections", "near_ties", "confident_errors"))
    if not (isinstance(n, int) and isinstance(ties, int) and isinstance(errors, int)):
        return None
    return rejection_kinds(n, ties, errors, brief=True)


def shown(text: str) -> str:
    """A token's text quoted on one line (its newlines and tabs as marks), a long one cut."""
    if not text:
        return "'' (part of a character)"
    line = text.replace("\n", "↵").replace("\t", "→")
    return repr(line) if len(line) <= SHOWN_CHARS else repr(line[: SHOWN_CHARS - 1]) + "…"


def facts(cursor: Cursor) -> list[str]:
    """What the panel shows of the token under the cursor: its text and source, then the
    verdict's own lines (verdicts.facts: the decision by the round's rule, p and q, what
    decided, the target's top 3 and the token emitted), as the HTML export's tooltips show them."""
    stop = cursor.stop
    if stop is None:
        return ["no token to inspect in this answer"]
    r = stop.round
    token, rejected = cursor.counts()
    where = f"round {r.index + 1} of {cursor.rounds[-1].index + 1}, "
    if stop.kind == REJECTED:  # counted apart: the answer's tokens are those it kept
        after = f"after token {token}" if token else "before token 1"
        what = f"rejected draft {rejected} of {cursor.n_rejected}: {plural(len(r.rejected), 'token')} ({r.spec_type})"
        head = f"{shown(stop.text)}  {what} · {where}{after} of {cursor.n_tokens}"
    else:
        head = f"{shown(stop.text)}  {LEGEND.get(stop.kind, stop.kind)} · {where}token {token} of {cursor.n_tokens}"
    return [head, *_what(stop)]


def _what(stop: Stop) -> list[str]:
    """The decision and the verdict's lines, or what the round says without them."""
    r, v = stop.round, stop.verdict
    emitted = r.tokens[r.n_accepted].piece if len(r.tokens) > r.n_accepted else ""
    if stop.role == REPLACED:
        return [f"emitted by the target instead of the rejected draft {shown(r.rejected_text)} (← its numbers)"]
    if stop.role == BONUS:
        return [f"the target's bonus token: the whole draft ({plural(r.n_drafted, 'token')}) was accepted"]
    if stop.role == OWN:
        return ["the target's own token: nothing was drafted this round"]
    if v is None and stop.role == REJECTED_DRAFT:
        return [f"rejected: the target emitted {shown(emitted)} instead (no p, q: not inspected)"]
    if v is None:
        return ["accepted: the target agreed (no p, q: not inspected)"]
    first = [f"its first token {shown(v.text)}, the only one judged"] if len(r.rejected) > 1 and not v.accepted else []
    return [*first, *verdicts.facts(v, r.verify, None if v.accepted else emitted)]
