"""ngram-map-k / ngram-map-k4v: n-gram lookup through a hash index, with per-key statistics.

Port of llama.cpp's common_ngram_map (common/ngram-map.cpp). The index maps an n-gram's
32-bit LCG hash to one position (first writer wins, positions added newest-first per
batch); positions not yet indexed are searched linearly. map-k caps a draft by how many
tokens of that key were accepted last time; map-k4v also counts up to four different
m-grams per key and drafts only one that is at least twice as frequent as the others.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

from spectui.drafters.base import DraftResult, Needs, NgramDrafter, as_token_list

LCG_FACTOR = 2654435761
KEY_MAP_SIZE = 1 << 18  # COMMON_NGRAM_HASH_MAP_SIZE
MAX_VALUES = 4  # COMMON_NGRAM_MAX_VALUES
MAX_VALUE_COUNT = 16380  # COMMON_NGRAM_MAX_VALUE_COUNT
FEW_POSITIONS = 32  # up to this many new positions are indexed without numpy


def lcg_hash(tokens: Sequence[int]) -> int:
    """llama.cpp's common_ngram_map_hash: h = h * 2654435761 + token, in uint32."""
    h = 0
    for t in tokens:
        h = (h * LCG_FACTOR + t) & 0xFFFFFFFF
    return h


def rfind(tokens: list[int], pattern: list[int], hi: int, lo: int) -> int:
    """Largest j with lo < j <= hi and tokens[j:j+len(pattern)] == pattern; 0 when none.

    Candidates come from list.index on a reversed copy, so the scan runs in C; counted first,
    as raising a ValueError from index() is costly with the caches cold after a decode.
    """
    if hi <= lo:
        return 0
    n = len(pattern)
    first = pattern[0]
    rev = tokens[hi:lo:-1]  # rev[r] == tokens[hi - r]
    r = 0
    for _ in range(rev.count(first)):
        r = rev.index(first, r)
        j = hi - r
        if tokens[j : j + n] == pattern:
            return j
        r += 1
    return 0


def _lcg_hashes(tokens: list[int], lo: int, hi: int, n: int) -> np.ndarray:
    """lcg_hash of the n-gram starting at each position lo..hi (inclusive), vectorised."""
    count = hi - lo + 1
    arr = np.array(tokens[lo : hi + n], dtype=np.int64).astype(np.uint32)
    h = np.zeros(count, dtype=np.uint32)
    factor = np.uint32(LCG_FACTOR)
    for k in range(n):
        h = h * factor + arr[k : k + count]
    return h


class _Value:
    """One m-gram seen after a key: where (0 = unused slot), how often, last accepted count."""

    __slots__ = ("idx", "num", "n_accepted")

    def __init__(self, n_accepted: int):
        self.idx = 0
        self.num = 0
        self.n_accepted = n_accepted


class _Key:
    __slots__ = ("key_idx", "stat_idx", "key_num", "values")

    def __init__(self, key_idx: int, m: int):
        self.key_idx = key_idx
        self.stat_idx = 0  # statistics are counted up to (and including) this position
        self.key_num = 0
        self.values = [_Value(m) for _ in range(MAX_VALUES)]


class _NgramMap(NgramDrafter):
    key_only: bool

    def __init__(self, size_n: int = 12, size_m: int = 48, min_hits: int = 1):
        if size_n < 1 or size_m < 1:
            raise ValueError(f"size_n and size_m must be >= 1, got {size_n}, {size_m}")
        self.size_n = size_n
        self.size_m = size_m
        self.min_hits = min_hits
        self._keys: list[_Key] = []
        # hash slot -> position, 0 = empty: read and written a slot at a time as an array (a
        # numpy scalar costs microseconds with the caches cold after a decode), at once as numpy
        self._key_slots = array("I", bytes(4 * KEY_MAP_SIZE))
        self._key_map = np.frombuffer(self._key_slots, dtype=np.uint32)
        self._key_map_last_idx = 0  # positions <= this have been offered to the key map
        self._size_last_begin = 0
        self._idx_last_check = 0
        self._last_value: _Value | None = None  # value behind the last non-empty draft

    def begin(self, prompt: Sequence[int]) -> None:
        """common_ngram_map_begin: when the context shrank, forget positions past the cut."""
        n, m = self.size_n, self.size_m
        size_begin = len(prompt)
        cleanup = self._size_last_begin
        if cleanup > size_begin:
            cleanup = size_begin - n - m if size_begin > n + m else 0
        if size_begin < self._idx_last_check:
            self._key_map[self._key_map >= max(cleanup, 1)] = 0
            self._key_map_last_idx = cleanup - 1 if cleanup > 0 else 0
            kept = []
            for key in self._keys:
                if key.key_idx >= cleanup:
                    continue
                if not self.key_only:
                    values = [v for v in key.values if v.idx != 0 and v.idx < cleanup]
                    if not values:
                        continue
                    key.values = values + [_Value(m) for _ in range(MAX_VALUES - len(values))]
                kept.append(key)
            self._keys = kept
        self._idx_last_check = size_begin
        self._size_last_begin = size_begin
        self._last_value = None

    def _index(self, tokens: list[int], lo: int, hi: int) -> None:
        """Offer positions hi down to lo+1 to the key map; a slot keeps its first writer.

        A round adds a few positions: hashed one by one, as the ~30 numpy calls of the
        vectorised path cost more than the work with the caches cold after a decode;
        a prompt's many positions are hashed at once."""
        if hi <= lo:
            return
        if hi - lo <= FEW_POSITIONS:
            key_map, n = self._key_slots, self.size_n
            for pos in range(hi, lo, -1):
                slot = lcg_hash(tokens[pos : pos + n]) & (KEY_MAP_SIZE - 1)
                if key_map[slot] == 0:
                    key_map[slot] = pos
            return
        slots = _lcg_hashes(tokens, lo + 1, hi, self.size_n)[::-1] & (KEY_MAP_SIZE - 1)
        positions = np.arange(hi, lo, -1, dtype=np.uint32)
        uniq, first = np.unique(slots, return_index=True)
        free = self._key_map[uniq] == 0
        self._key_map[uniq[free]] = positions[first[free]]

    def _find(self, toks: list[int], key: list[int], cur_len: int) -> int:
        """Position of an earlier copy of key (0 = none), then index the new positions."""
        n, m = self.size_n, self.size_m
        top = cur_len - n - m - 1  # last position whose key is followed by a full m-gram
        last = self._key_map_last_idx
        begin_top = self._size_last_begin - n - m - 1
        match_pos = 0
        idx = self._key_slots[lcg_hash(key) & (KEY_MAP_SIZE - 1)]
        if idx != 0 and idx < top and toks[idx : idx + n] == key:
            match_pos = idx
        if match_pos == 0 and begin_top > 0:
            match_pos = rfind(toks, key, begin_top, last)
        if match_pos == 0:
            match_pos = rfind(toks, key, top, max(self._size_last_begin, last))
        if begin_top > 0:
            self._index(toks, last, begin_top)
        self._index(toks, max(self._size_last_begin, last), top)
        self._key_map_last_idx = max(top, last)
        return match_pos

    def _count_values(self, toks: list[int], key: list[int], entry: _Key, match_pos: int) -> None:
        """Count the m-grams after each copy of key at positions stat_idx..match_pos."""
        n, m = self.size_n, self.size_m
        first = key[0]
        i = entry.stat_idx
        while True:
            try:
                i = toks.index(first, i, match_pos + 1)
            except ValueError:
                break
            if toks[i : i + n] == key:
                start = i + n
                mgram = toks[start : start + m]
                for v in entry.values:
                    if v.idx == 0:  # a new m-gram takes the first free slot
                        v.idx, v.num, v.n_accepted = start, 0, m
                    elif toks[v.idx : v.idx + m] != mgram:
                        continue
                    v.num = min(v.num + 1, MAX_VALUE_COUNT)
                    break
            i += 1
        entry.stat_idx = match_pos

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        self._last_value = None
        if n_max <= 0 or len(tokens) == 0:
            return DraftResult()
        toks = as_token_list(tokens)
        n, m = self.size_n, self.size_m
        cur_len = len(toks) - 1  # llama.cpp's history; toks[-1] is the token just sampled
        if cur_len < 2 * n + m:
            return DraftResult()
        if cur_len < self._idx_last_check:
            # llama.cpp aborts here (begin() must precede a shorter context); start a new turn
            self.begin(toks[:cur_len])
        self._idx_last_check = cur_len
        key = toks[-n:]
        match_pos = self._find(toks, key, cur_len)
        if match_pos == 0:
            return DraftResult()

        entry = next((k for k in self._keys if toks[k.key_idx : k.key_idx + n] == key), None)
        if entry is None:
            entry = _Key(match_pos, m)
            self._keys.append(entry)
        entry.key_num = min(entry.key_num + 1, MAX_VALUE_COUNT)

        if self.key_only:
            value = entry.values[0]
            start = match_pos + n
        else:
            if entry.key_num < self.min_hits:
                return DraftResult()
            self._count_values(toks, key, entry, match_pos)
            counts = [v.num for v in entry.values]
            max_occur = max(counts)
            value = entry.values[counts.index(max_occur)]
            others = sum(counts) - max_occur
            if others > 0 and max_occur < 2 * others:
                return DraftResult()
            start = value.idx  # llama.cpp copies from match_pos here; see the class docstring
        result = toks[start : start + min(m, value.n_accepted, n_max)]
        if result:
            self._last_value = value
        return DraftResult(result)

    def accept(self, n_accepted: int) -> None:
        """The accepted count caps the next draft from the same key/value."""
        if self._last_value is not None:
            self._last_value.n_accepted = n_accepted


class NgramMapK(_NgramMap):
    """Keys only: draft the m tokens after the found key, capped by its last accepted count.

    min_hits is accepted for symmetry with the settings but, as in llama.cpp, unused here.
    """

    key_only = True

    @classmethod
    def build(cls, needs: Needs) -> NgramMapK:
        s = needs.spec
        return cls(s.ngram_map_k_size_n, s.ngram_map_k_size_m, s.ngram_map_k_min_hits)


class NgramMapK4V(_NgramMap):
    """Up to four m-grams per key with counts; drafts the most frequent when count >= 2x the rest.

    Deliberate difference: llama.cpp picks the winning value but then copies the tokens
    after the match position, which can be a less frequent m-gram; this drafts the winner.
    """

    key_only = False

    @classmethod
    def build(cls, needs: Needs) -> NgramMapK4V:
        s = needs.spec
        return cls(s.ngram_map_k4v_size_n, s.ngram_map_k4v_size_m, s.ngram_map_k4v_min_hits)
