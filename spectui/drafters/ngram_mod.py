"""ngram-mod: a fixed-size hash table from n-gram to the token that last followed it.

Port of llama.cpp's common_ngram_mod (common/ngram-mod.cpp) as driven by
common_speculative_impl_ngram_mod (common/speculative.cpp). The table has no key check
(collisions just overwrite) and lives across turns; it is cleared when too full or when
its drafts keep failing.

Deliberate difference: the acceptance fraction behind the low-acceptance reset is taken
over the tokens this drafter returned (after n_max truncation). llama.cpp uses the length
before the caller's truncation, which only bites there near the context end, but with a
small --spec-draft-n-max it would reset the table every five rounds however good the drafts.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

from spectui.drafters.base import DraftResult, Needs, NgramDrafter, as_token_list

HASH_FACTOR = 6364136223846793005
MASK64 = (1 << 64) - 1
EMPTY = -1
TABLE_SIZE = 4 * 1024 * 1024  # int32 slots, as llama.cpp sizes its table
OCCUPANCY_RESET = 0.25  # reset when a new prompt leaves more of the table used than this
ADD_CHUNK = 32  # while generating, add new n-grams once more than this many tokens are pending
FEW_POSITIONS = 2 * ADD_CHUNK  # up to this many n-grams are added without numpy
LOW_ACCEPT = 0.25  # a round is "low" when fewer than this fraction of drafted tokens is accepted
LOW_ROUNDS = 5  # this many low rounds in a row reset the table


def ngram_hash(tokens: Sequence[int]) -> int:
    """common_ngram_mod::idx before the modulo: h = h * 6364136223846793005 + token, in uint64."""
    h = 0
    for t in tokens:
        h = (h * HASH_FACTOR + t) & MASK64
    return h


class NgramMod(NgramDrafter):
    @classmethod
    def build(cls, needs: Needs) -> NgramMod:
        return cls(needs.spec.ngram_mod_n_match, needs.spec.ngram_mod_n_min, needs.spec.ngram_mod_n_max)

    def __init__(self, n_match: int = 24, n_min: int = 48, n_max: int = 64, table_size: int = TABLE_SIZE):
        if n_match < 1 or table_size < 1:
            raise ValueError(f"n_match and table_size must be >= 1, got {n_match}, {table_size}")
        self.n_match = n_match
        self.n_min = n_min
        self.n_max = n_max
        # read a slot at a time as an array (a numpy scalar costs microseconds with the caches
        # cold after a decode, once per drafted token), written at once through numpy
        self._slots = array("i", bytes(4 * table_size))
        self.table = np.frombuffer(self._slots, dtype=np.int32)
        self.table.fill(EMPTY)
        self.used = 0  # slots not EMPTY
        self._drop_factor = pow(HASH_FACTOR, n_match - 1, 1 << 64)  # removes a window's oldest token
        self._i_last = 0  # n-grams starting before this position are in the table
        self._n_draft_last = 0
        self._n_low = 0

    def _clear(self) -> None:
        """Empty the table: too full, or its drafts keep failing."""
        self.table.fill(EMPTY)
        self.used = 0

    def _add(self, toks: list[int], lo: int, hi: int) -> None:
        """Store, for each n-gram starting at lo..hi-1, the token after it (last writer wins).

        A round adds some ADD_CHUNK n-grams: one by one, each hash rolled on from the last, as
        the vectorised path's ~20 numpy calls cost far more with the caches cold after a
        decode (docs/performance.md); a prompt's many n-grams are added at once."""
        count = hi - lo
        if count <= 0:
            return
        n = self.n_match
        if count <= FEW_POSITIONS:
            slots, size, drop = self._slots, len(self._slots), self._drop_factor
            h = ngram_hash(toks[lo : lo + n])
            for i in range(lo, hi):
                slot = h % size
                if slots[slot] == EMPTY:
                    self.used += 1
                slots[slot] = toks[i + n]
                h = ((h - toks[i] * drop) * HASH_FACTOR + toks[i + n]) & MASK64
            return
        arr = np.array(toks[lo : hi + n], dtype=np.int64)
        words = arr.astype(np.uint64)
        hashes = np.zeros(count, dtype=np.uint64)
        factor = np.uint64(HASH_FACTOR)
        for k in range(n):
            hashes = hashes * factor + words[k : k + count]
        at = (hashes % np.uint64(self.table.size)).astype(np.int64)
        uniq, first = np.unique(at[::-1], return_index=True)  # the last write to each slot
        followers = arr[n : n + count][::-1][first].astype(np.int32)
        self.used += int(np.count_nonzero(self.table[uniq] == EMPTY))
        self.table[uniq] = followers

    def begin(self, prompt: Sequence[int]) -> None:
        self._i_last = 0
        self._n_draft_last = 0
        toks = as_token_list(prompt)
        n = self.n_match
        if len(toks) < n:
            return
        self._add(toks, 0, len(toks) - n)
        self._i_last = len(toks) - n
        if self.used / self.table.size > OCCUPANCY_RESET:
            self._clear()

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        self._n_draft_last = 0
        if n_max <= 0 or len(tokens) == 0:
            return DraftResult()
        toks = as_token_list(tokens)
        n = self.n_match
        cur_len = len(toks) - 1  # llama.cpp's history; toks[-1] is the token just sampled
        if cur_len < n:
            return DraftResult()
        if self._i_last + ADD_CHUNK < cur_len:
            self._add(toks, self._i_last, cur_len - n)
            self._i_last = cur_len - n

        window = toks[-n:]  # grows with the drafted tokens; the last n are hashed
        h = ngram_hash(window)
        slots = self._slots
        size = len(slots)
        drafted: list[int] = []
        for i in range(self.n_max):
            token = slots[h % size]
            if token == EMPTY:
                if i < self.n_min:
                    return DraftResult()
                break
            drafted.append(token)
            window.append(token)
            h = ((h - window[i] * self._drop_factor) * HASH_FACTOR + token) & MASK64
        result = drafted[:n_max]
        self._n_draft_last = len(result)
        return DraftResult(result)

    def accept(self, n_accepted: int) -> None:
        if self._n_draft_last == 0:
            return
        if n_accepted / self._n_draft_last < LOW_ACCEPT:
            self._n_low += 1
            if self._n_low >= LOW_ROUNDS:
                self._clear()
                self._n_low = 0
                self._i_last = 0
        else:
            self._n_low = 0
