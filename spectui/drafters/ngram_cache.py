"""ngram-cache: next-token counts for the 1..4-grams of the context, drafted greedily.

Port of llama.cpp's common_speculative_impl_ngram_cache with common_ngram_cache_update /
common_ngram_cache_draft (common/ngram-cache.cpp), context cache only: llama.cpp's
static and dynamic caches are optional files (--lookup-cache-static/-dynamic), empty by default.

As in llama.cpp, the counts are updated with each round's new tokens as a separate chunk,
so n-grams that straddle two rounds' chunks are never counted.

Deliberate differences: llama.cpp's begin() does nothing, so a context that shrank or
changed keeps stale counts and is not counted again until it outgrows its old length;
here begin() starts over when the new context does not extend the counted tokens.

Ties (two followers at exactly 50%): llama.cpp keeps the first maximum in
std::unordered_map order. libstdc++ puts each new key at the front of the iteration
order (of the whole list, or of its bucket's group), so for the few followers an n-gram
has, the follower first seen last wins; so it does here. Taking the first-seen one instead
drafted 8 tokens where llama.cpp drafted 5 and 3 on the benchmark's copy prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from spectui.drafters.base import DraftResult, NgramDrafter, as_token_list

NGRAM_MIN = 1
NGRAM_MAX = 4
NGRAM_STATIC = 2  # llama.cpp needs at least this many tokens before drafting
N_DRAFT = 8  # llama.cpp hard-codes the ngram-cache draft length
# A candidate after an n-gram of size s is drafted only with at least MIN_SAMPLE[s-1]
# observations and a share of at least MIN_PERCENT[s-1] percent (llama.cpp's "lax" set).
MIN_SAMPLE = (2, 2, 1, 1)
MIN_PERCENT = (66, 50, 50, 50)


class NgramCache(NgramDrafter):
    def __init__(self) -> None:
        self._counts: dict[tuple[int, ...], dict[int, int]] = {}  # n-gram -> {next token: count}
        self._seen: list[int] = []  # the tokens counted so far, in order

    def begin(self, prompt: Sequence[int]) -> None:
        toks = as_token_list(prompt)
        if toks[: len(self._seen)] != self._seen:
            self._counts.clear()
            self._seen = []

    def _update(self, chunk: list[int]) -> None:
        for size in range(NGRAM_MIN, NGRAM_MAX + 1):
            for i in range(size, len(chunk)):
                following = self._counts.setdefault(tuple(chunk[i - size : i]), {})
                token = chunk[i]
                following[token] = following.get(token, 0) + 1

    def _next_token(self, tail: list[int]) -> int | None:
        """Longest n-gram first: the most frequent follower if it passes that size's thresholds."""
        for size in range(min(NGRAM_MAX, len(tail)), NGRAM_MIN - 1, -1):
            following = self._counts.get(tuple(tail[-size:]))
            if not following:
                continue
            best, best_count, total = None, 0, 0
            for token, count in following.items():  # a tie goes to the token first seen last
                if count >= best_count:
                    best, best_count = token, count
                total += count
            if total < MIN_SAMPLE[size - 1] or 100 * best_count < MIN_PERCENT[size - 1] * total:
                continue
            return best
        return None

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        if n_max <= 0 or len(tokens) == 0:
            return DraftResult()
        toks = as_token_list(tokens)
        if len(self._seen) < len(toks):
            chunk = toks[len(self._seen) :]
            self._update(chunk)
            self._seen.extend(chunk)
        if len(toks) < NGRAM_STATIC:
            return DraftResult()
        tail = toks[-NGRAM_MAX:]
        drafted: list[int] = []
        # llama.cpp drafts N_DRAFT tokens and the caller truncates; each token depends only
        # on the ones before it, so stopping at n_max gives the same prefix.
        while len(drafted) < min(N_DRAFT, n_max):
            token = self._next_token(tail)
            if token is None:
                break
            drafted.append(token)
            tail = (tail + [token])[-NGRAM_MAX:]
        return DraftResult(drafted)
