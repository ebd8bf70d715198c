"""ngram-simple: draft what followed the most recent earlier copy of the last n tokens.

Port of llama.cpp's common_ngram_simple_draft (common/ngram-map.cpp). llama.cpp keeps no
state; this keeps the history mirrored as int32 bytes so the backwards search runs as one
C-level bytes.rfind instead of a Python loop over positions. begin() checks the mirror
against a new context; between begin() calls the history only grows (as the engine's does
within a turn), so a round appends its new tokens without comparing the rest, whose cost
grew with the history (caches cold after a decode).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from spectui.drafters.base import DraftResult, Needs, NgramDrafter, as_token_list

_WIDTH = array("i").itemsize  # bytes per token


class _TokenBytes:
    """A token list and its int32 bytes, extended in place while the list only grows."""

    def __init__(self) -> None:
        self._tokens: list[int] = []
        self._buf = bytearray()

    def sync(self, tokens: list[int]) -> None:
        """Mirror `tokens`, kept where they extend the mirror, else from scratch."""
        if tokens[: len(self._tokens)] != self._tokens:  # (a shorter list differs too)
            self._tokens, self._buf = [], bytearray()
        self.extend(tokens)

    def extend(self, tokens: list[int]) -> None:
        """Mirror `tokens`, known to extend the mirror (or shorter: then from scratch)."""
        k = len(self._tokens)
        if len(tokens) < k:
            self._tokens, self._buf, k = [], bytearray(), 0
        new = tokens[k:]
        self._tokens.extend(new)
        self._buf += array("i", new)

    def rfind(self, pattern: list[int], hi: int) -> int:
        """Largest j with 0 < j <= hi and tokens[j:j+len(pattern)] == pattern; 0 when none."""
        needle = array("i", pattern)  # bytes-like: its int32 bytes
        end = (hi + len(pattern)) * _WIDTH
        while True:
            off = self._buf.rfind(needle, _WIDTH, end)
            if off < 0:
                return 0
            if off % _WIDTH == 0:
                return off // _WIDTH
            end = off + len(pattern) * _WIDTH - 1  # a match straddling two tokens: look further back


class NgramSimple(NgramDrafter):
    @classmethod
    def build(cls, needs: Needs) -> NgramSimple:
        return cls(needs.spec.ngram_simple_size_n, needs.spec.ngram_simple_size_m)

    def __init__(self, size_n: int = 12, size_m: int = 48):
        if size_n < 1 or size_m < 1:
            raise ValueError(f"size_n and size_m must be >= 1, got {size_n}, {size_m}")
        self.size_n = size_n
        self.size_m = size_m
        self._history = _TokenBytes()

    def begin(self, prompt: Sequence[int]) -> None:
        self._history.sync(as_token_list(prompt))

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        if n_max <= 0 or len(tokens) == 0:
            return DraftResult()
        toks = as_token_list(tokens)
        n, m = self.size_n, self.size_m
        cur_len = len(toks) - 1  # llama.cpp's history; toks[-1] is the token just sampled
        if cur_len <= n + m + 1:
            return DraftResult()
        self._history.extend(toks)
        # llama.cpp starts one position further back than the pattern's own start
        match_pos = self._history.rfind(toks[-n:], cur_len - n - 1)
        if match_pos == 0:  # position 0 never matches
            return DraftResult()
        copy_max = min(m, cur_len - (match_pos + n))
        if copy_max < n:
            return DraftResult()
        start = match_pos + n
        return DraftResult(toks[start : start + min(copy_max, n_max)])
