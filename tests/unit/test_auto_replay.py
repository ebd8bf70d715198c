"""auto against ngram-simple on a replayed text and cost curve: rounds driven through the
Controller as the engine drives them, every time read off the curve (no model, no clock)."""

from __future__ import annotations

from spectui.engine.auto import NGRAM, NOTHING_PAYS, Controller
from tests.helpers.auto_rounds import observe_round

# A CPU whose single-token step has a fast path of its own: a batch of 2 costs two steps and
# one of 3 nearly three, yet one of 17 (ngram-simple's whole 16-token draft) about five.
CURVE = {1: 1.0, 2: 2.0, 3: 2.9, 5: 3.3, 9: 4.0, 17: 5.2}
SIZE_M = 16  # the n-gram's draft length (--spec-ngram-simple-size-m)
COPY, FRESH = 48, 16  # code copied from the prompt, then new text, over and over
TEXT = 640


def t_verify(b: int) -> float:
    """The curve, linear between its sizes."""
    lo = max(s for s in CURVE if s <= b)
    hi = min(s for s in CURVE if s >= b)
    return CURVE[lo] if lo == hi else CURVE[lo] + (CURVE[hi] - CURVE[lo]) * (b - lo) / (hi - lo)


def candidate(pos: int) -> tuple[list[int], int]:
    """The n-gram candidate at `pos` (token ids are positions) and how much of it matches:
    in a copy, the rest of the copy; in new text, a wrong one now and then, else none."""
    at = pos % (COPY + FRESH)
    if at < COPY:
        n = min(SIZE_M, COPY - at, TEXT - pos)
        return list(range(pos, pos + n)) + [-1] * (SIZE_M - n), n
    return ([-1] * SIZE_M, 0) if at % 4 == 0 else ([], 0)


def replay(auto: bool) -> tuple[float, int, list[str]]:
    """Seconds for the text, rounds and auto's reasons; ngram-simple drafts every candidate."""
    c, pos, seconds, reasons = Controller(), 0, 0.0, []
    while pos < TEXT:
        cand, matched = candidate(pos)
        k = len(cand)
        if auto:
            d = c.choose(len(cand), False, 0)
            k, reasons = (d.k if d.source == NGRAM else 0), [*reasons, d.reason]
        accepted = min(k, matched)
        t = t_verify(k + 1)
        if auto:
            observe_round(c, d, cand[:k], accepted, pos + accepted, t, candidate=cand)
        seconds, pos = seconds + t, pos + accepted + 1
    return seconds, pos, reasons


def test_auto_keeps_up_with_ngram_simple_where_small_batches_are_steep_and_big_ones_cheap():
    seconds, tokens, _ = replay(auto=False)
    ngram_simple = tokens / seconds
    seconds, tokens, reasons = replay(auto=True)
    auto = tokens / seconds
    assert ngram_simple > 1.2  # tokens a step: it beats none (1) here, the one to match
    assert auto >= 0.97 * ngram_simple, (auto, ngram_simple)
    # where auto drafts nothing, it says whether a draft was there to decline
    assert NOTHING_PAYS in reasons and "no n-gram match" in reasons
