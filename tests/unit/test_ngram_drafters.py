"""The n-gram drafters against hand-computed cases, literal transcriptions of llama.cpp, and properties.

The oracles below are line-by-line transcriptions of llama.cpp's C++ (common/ngram-map.cpp,
common/ngram-mod.cpp, common/speculative.cpp) without the drafters' shortcuts (bytes search,
numpy hashing, rolling hash), so a shortcut that changes behaviour shows up as a mismatch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spectui.drafters import ngram_mod, registry
from spectui.drafters.base import NgramDrafter
from spectui.drafters.ngram_cache import NgramCache
from spectui.drafters.ngram_map import KEY_MAP_SIZE, NgramMapK, NgramMapK4V, lcg_hash
from spectui.drafters.ngram_mod import NgramMod, ngram_hash
from spectui.drafters.ngram_simple import NgramSimple
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import NGRAM_TYPES, SpecConfig

F = 6364136223846793005


# ---------------------------------------------------------------- oracles


def oracle_simple(tokens, n, m, n_max):
    inp, sampled = tokens[:-1], tokens[-1]
    cur_len = len(inp)
    if cur_len <= n + m + 1:
        return []
    pattern = inp[cur_len - n + 1 :] + [sampled]
    match_pos = 0
    for j in range(cur_len - n - 1, 0, -1):
        if all(inp[j + k] == pattern[k] for k in range(n)):
            match_pos = j
            break
    if match_pos == 0:
        return []
    copy_max = min(m, cur_len - (match_pos + n))
    if copy_max < n:
        return []
    return inp[match_pos + n : match_pos + n + copy_max][:n_max]


class OracleSimple:
    def __init__(self, n, m):
        self.n, self.m = n, m

    def begin(self, prompt):
        pass

    def draft(self, tokens, n_max):
        return oracle_simple(tokens, self.n, self.m, n_max)

    def accept(self, n_accepted):
        pass


class OracleMap:
    """common_ngram_map_begin/draft/accept, transcribed; drafts the winning k4v value (see NgramMapK4V)."""

    def __init__(self, n, m, key_only, min_hits):
        self.n, self.m, self.key_only, self.min_hits = n, m, key_only, min_hits
        self.keys = []  # [key_idx, stat_idx, key_num, values]; value = [idx, num, n_accepted]
        self.key_map = {}  # slot -> idx; missing = 0
        self.key_map_last_idx = 0
        self.size_last_begin = 0
        self.idx_last_check = 0
        self.last = None

    def h(self, toks):
        return lcg_hash(toks) % KEY_MAP_SIZE

    def begin(self, prompt):
        n, m = self.n, self.m
        size_begin = len(prompt)
        cleanup = self.size_last_begin
        if cleanup > size_begin:
            cleanup = size_begin - n - m if size_begin > n + m else 0
        if size_begin < self.idx_last_check:
            for slot, idx in list(self.key_map.items()):
                if idx != 0 and idx >= cleanup:
                    del self.key_map[slot]
            self.key_map_last_idx = cleanup - 1 if cleanup > 0 else 0
        if size_begin < self.idx_last_check and self.keys:
            for i in range(len(self.keys) - 1, -1, -1):
                key = self.keys[i]
                if key[0] >= cleanup:
                    del self.keys[i]
                    continue
                if self.key_only:
                    continue
                values = key[3]
                for j in range(3, -1, -1):
                    if values[j][0] != 0 and values[j][0] >= cleanup:
                        for k in range(j, 3):
                            values[k] = list(values[k + 1])
                        values[3] = [0, 0, values[3][2]]
                if values[0][0] == 0:
                    del self.keys[i]
        self.idx_last_check = size_begin
        self.size_last_begin = size_begin

    def draft(self, tokens, n_max):
        n, m = self.n, self.m
        self.last = None
        inp, sampled = tokens[:-1], tokens[-1]
        cur_len = len(inp)
        if cur_len < 2 * n + m:
            return []
        assert self.idx_last_check <= cur_len
        self.idx_last_check = cur_len
        key = inp[cur_len - n + 1 :] + [sampled]

        def matches(j):
            return all(inp[j + k] == key[k] for k in range(n))

        match_pos = 0
        idx_key = self.key_map.get(self.h(key), 0)
        if idx_key != 0 and idx_key < cur_len - n - m - 1 and matches(idx_key):
            match_pos = idx_key
        if match_pos == 0 and self.size_last_begin > n + m + 1:
            j = self.size_last_begin - n - m - 1
            while j > self.key_map_last_idx:
                if matches(j):
                    match_pos = j
                    break
                j -= 1
        if match_pos == 0:
            j = cur_len - n - m - 1
            while j > self.size_last_begin and j > self.key_map_last_idx:
                if matches(j):
                    match_pos = j
                    break
                j -= 1
        if self.size_last_begin > n + m + 1:
            j = self.size_last_begin - n - m - 1
            while j > self.key_map_last_idx:
                self.key_map.setdefault(self.h(inp[j : j + n]), j)
                j -= 1
        j = cur_len - n - m - 1
        while j > self.size_last_begin and j > self.key_map_last_idx:
            self.key_map.setdefault(self.h(inp[j : j + n]), j)
            j -= 1
        self.key_map_last_idx = max(cur_len - n - m - 1, self.key_map_last_idx)
        if match_pos == 0:
            return []

        offset = len(self.keys)
        for i, k in enumerate(self.keys):
            if all(inp[k[0] + j] == key[j] for j in range(n)):
                offset = i
                break
        if offset == len(self.keys):
            self.keys.append([match_pos, 0, 0, [[0, 0, m] for _ in range(4)]])
        cur = self.keys[offset]
        cur[2] = min(cur[2] + 1, 16380)
        values = cur[3]
        if self.key_only:
            self.last = values[0]
            return inp[match_pos + n : match_pos + n + min(m, values[0][2])][:n_max]
        if cur[2] < self.min_hits:
            return []
        for i in range(cur[1], match_pos + 1):
            if not matches(i):
                continue
            begin_value = i + n
            idx_value = -1
            for v in range(4):
                if values[v][0] == 0:
                    values[v] = [begin_value, 0, m]
                    idx_value = v
                    break
                if all(inp[begin_value + j] == inp[values[v][0] + j] for j in range(m)):
                    idx_value = v
                    break
            if idx_value >= 0:
                values[idx_value][1] = min(values[idx_value][1] + 1, 16380)
        cur[1] = match_pos
        max_occur, slot_max = 0, 0
        for v in range(4):
            if values[v][1] > max_occur:
                max_occur, slot_max = values[v][1], v
        sum_occur = sum(values[v][1] for v in range(4) if v != slot_max)
        if sum_occur > 0 and max_occur < 2 * sum_occur:
            return []
        self.last = values[slot_max]
        start = values[slot_max][0]
        return inp[start : start + min(m, values[slot_max][2])][:n_max]

    def accept(self, n_accepted):
        if self.last is not None:
            self.last[2] = n_accepted


class OracleMod:
    """common_ngram_mod + common_speculative_impl_ngram_mod, transcribed (acceptance over returned tokens)."""

    def __init__(self, n_match, n_min, n_max, size):
        self.n, self.n_min, self.n_max, self.size = n_match, n_min, n_max, size
        self.entries = [-1] * size
        self.used = 0
        self.i_last = 0
        self.n_draft_last = 0
        self.n_low = 0

    def idx(self, toks):
        res = 0
        for t in toks[: self.n]:
            res = (res * F + t) % 2**64
        return res % self.size

    def add(self, toks):
        i = self.idx(toks)
        if self.entries[i] == -1:
            self.used += 1
        self.entries[i] = toks[self.n]

    def reset(self):
        self.entries = [-1] * self.size
        self.used = 0

    def begin(self, prompt):
        self.i_last = 0
        self.n_draft_last = 0
        if len(prompt) < self.n:
            return
        for i in range(len(prompt) - self.n):
            self.add(prompt[i:])
        self.i_last = len(prompt) - self.n
        if self.used / self.size > 0.25:
            self.reset()

    def draft(self, tokens, n_max):
        self.n_draft_last = 0
        prompt, id_last = tokens[:-1], tokens[-1]
        cur_len, n = len(prompt), self.n
        if cur_len < n:
            return []
        if self.i_last + 32 < cur_len:
            for i in range(self.i_last, cur_len - n):
                self.add(prompt[i:])
            self.i_last = cur_len - n
        result = prompt[cur_len - n + 1 :] + [id_last]
        for i in range(self.n_max):
            token = self.entries[self.idx(result[i:])]
            if token == -1:
                if i < self.n_min:
                    return []
                break
            result.append(token)
        result = result[n:][:n_max]
        self.n_draft_last = len(result)
        return result

    def accept(self, n_accepted):
        if self.n_draft_last > 0:
            if n_accepted / self.n_draft_last < 0.25:
                self.n_low += 1
                if self.n_low >= 5:
                    self.reset()
                    self.n_low = 0
                    self.i_last = 0
            else:
                self.n_low = 0


# ---------------------------------------------------------------- session driver


def run_session(drafter, first, later, n_max, oracle=None, check=None):
    """Drive begin/draft/accept like the engine: turn one is `first` = (prompt, truth); each
    later turn (cut, extra, truth) starts from the last sequence cut to `cut` tokens plus
    `extra`, so contexts both grow and shrink. Drafts are verified against `truth`."""
    seq = []
    turns = [(None, first[0], first[1])] + list(later)
    for cut, extra, truth in turns:
        prompt = list(extra) if cut is None else seq[:cut] + list(extra)
        if not truth:
            continue
        drafter.begin(prompt)
        if oracle is not None:
            oracle.begin(prompt)
        seq = prompt + [truth[0]]
        pos = 1
        while True:
            draft = drafter.draft(seq, n_max).tokens
            assert len(draft) <= n_max
            if oracle is not None:
                assert draft == oracle.draft(list(seq), n_max)
            if check is not None:
                check(seq, draft)
            accepted = 0
            while accepted < len(draft) and pos + accepted < len(truth) and draft[accepted] == truth[pos + accepted]:
                accepted += 1
            if draft:
                drafter.accept(accepted)
                if oracle is not None:
                    oracle.accept(accepted)
            if pos + accepted >= len(truth):
                break
            seq = seq + draft[:accepted] + [truth[pos + accepted]]
            pos += accepted + 1
    return seq


def continuation_check(n):
    """A draft must be what followed an earlier copy (not at position 0) of the last n tokens."""

    def check(seq, draft):
        if not draft:
            return
        hist, key, d = seq[:-1], seq[-n:], len(draft)
        assert any(hist[j - n : j] == key and hist[j : j + d] == draft for j in range(n + 1, len(hist) - d + 1)), (
            seq,
            draft,
        )

    return check


tok_lists = st.lists(st.integers(0, 3), max_size=90)
truths = st.lists(st.integers(0, 3), min_size=1, max_size=60)
later_turns = st.lists(st.tuples(st.integers(0, 200), tok_lists, truths), max_size=3)
n_maxes = st.integers(1, 10)


# ---------------------------------------------------------------- ngram-simple


def test_simple_most_recent_match_wins():
    t = [9, 1, 2, 5, 6, 7, 1, 2, 8, 8, 8, 0, 1, 2]
    assert NgramSimple(2, 3).draft(t, 10).tokens == [8, 8, 8]  # the earliest copy would give [5, 6, 7]


def test_simple_most_recent_match_wins_even_when_it_is_too_close():
    # a run of one token: the nearest copy leaves 1 token < size_n, and older copies are not tried
    assert NgramSimple(2, 3).draft([4] + [5] * 19, 10).tokens == []


def test_simple_position_zero_never_matches():
    assert NgramSimple(2, 3).draft([1, 2, 5, 6, 7, 3, 3, 3, 4, 1, 2], 10).tokens == []
    assert NgramSimple(2, 3).draft([0, 1, 2, 5, 6, 7, 3, 3, 3, 4, 1, 2], 10).tokens == [5, 6, 7]


def test_simple_needs_more_than_n_plus_m_plus_1_history_tokens():
    assert NgramSimple(2, 3).draft([0, 1, 2, 5, 6, 1, 2], 10).tokens == []  # history of 6 = n+m+1
    assert NgramSimple(2, 3).draft([0, 1, 2, 5, 6, 7, 1, 2], 10).tokens == [5, 6, 7]  # history of 7


def test_simple_no_draft_when_fewer_than_n_tokens_would_be_drafted():
    filler = [50, 51, 52, 53, 54, 55, 56, 57]
    assert NgramSimple(3, 5).draft(filler + [1, 2, 3, 1, 2, 3], 10).tokens == []  # only 2 tokens after the copy
    assert NgramSimple(3, 5).draft(filler + [1, 2, 3, 60, 1, 2, 3], 10).tokens == [60, 1, 2]


def test_simple_truncates_to_n_max_after_its_own_rules():
    t = [9, 1, 2, 5, 6, 7, 1, 2, 8, 8, 8, 0, 1, 2]
    assert NgramSimple(2, 3).draft(t, 2).tokens == [8, 8]
    assert NgramSimple(2, 3).draft(t, 0).tokens == []
    assert NgramSimple(3, 5).draft([50, 51, 52, 53, 54, 55, 56, 57, 1, 2, 3, 1, 2, 3], 1).tokens == []


def test_simple_sees_a_changed_history_at_begin():
    """begin() checks its mirror of the history against the new context; within a turn
    draft() only appends what grew, as the engine's history only grows then."""
    s = NgramSimple(2, 3)
    for tokens, expected in [
        ([0, 1, 2, 5, 6, 7, 1, 2], [5, 6, 7]),
        ([0, 4, 1, 2, 6, 6, 1, 2], [6, 6, 1]),  # same length, copy moved
        ([0, 4, 4, 4, 1, 2, 7, 7, 7, 1, 2], [7, 7, 7]),  # longer, prefix changed
        (np.array([0, 1, 2, 4, 4, 4, 1, 2]), [4, 4, 4]),
    ]:
        s.begin(tokens[:-1])
        assert s.draft(tokens, 10).tokens == expected
    grown = [0, 1, 2, 4, 4, 4, 1, 2, 4, 4, 9, 1, 2]  # the same turn, grown
    assert s.draft(grown, 10).tokens == NgramSimple(2, 3).draft(grown, 10).tokens == [4, 4, 9]
    assert s.draft([9, 9, 0, 1, 3, 3, 9, 0, 1], 10).tokens == [3, 3, 9]  # shorter: seen without begin()


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), tok_lists, truths, later_turns, n_maxes)
def test_simple_matches_llama_cpp_and_drafts_a_continuation(n, m, prompt, truth, later, n_max):
    run_session(NgramSimple(n, m), (prompt, truth), later, n_max, OracleSimple(n, m), continuation_check(n))


def test_simple_skips_byte_matches_that_straddle_tokens():
    # the search runs over int32 bytes: [65536, 256] also occurs misaligned, overlapping the real copy
    t = [257, 65536, 257, 65536, 256, 1, 0, 9, 65536, 256]
    assert NgramSimple(2, 2).draft(t, 10).tokens == [1, 0]


byte_rich = st.lists(st.sampled_from([0, 1, 256, 257, 65536, 2**31 - 1]), max_size=60)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), byte_rich, byte_rich.filter(bool), n_maxes)
def test_simple_matches_llama_cpp_on_multibyte_tokens(n, m, prompt, truth, n_max):
    run_session(NgramSimple(n, m), (prompt, truth), [], n_max, OracleSimple(n, m))


# ---------------------------------------------------------------- ngram-map-k / k4v


def test_map_k_most_recent_match_then_capped_by_last_accepted_count():
    k = NgramMapK(2, 3)
    t = [9, 1, 2, 5, 6, 7, 1, 2, 8, 8, 8, 0, 3, 3, 3, 1, 2]
    assert k.draft(t, 10).tokens == [8, 8, 8]
    k.accept(1)
    t += [9, 1, 2]
    assert k.draft(t, 10).tokens == [8]
    k.accept(0)
    t += [4, 1, 2]
    assert k.draft(t, 10).tokens == []  # a key with nothing accepted last time drafts nothing


def test_map_k_index_keeps_its_first_writer():
    k = NgramMapK(2, 3)
    t = [9, 1, 2, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 1, 2]
    assert k.draft(t, 10).tokens == [5, 6, 7]
    t += [8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2]
    assert k.draft(t, 10).tokens == [5, 6, 7]  # the newer copy does not replace the indexed one
    assert NgramSimple(2, 3).draft(t, 10).tokens == [8, 8, 8]


def test_map_index_one_by_one_matches_the_vectorised_index(monkeypatch):
    """A round's few new positions are hashed in Python, a prompt's at once with numpy: the
    same key map either way, first writers included (a small alphabet repeats n-grams)."""
    import spectui.drafters.ngram_map as ngram_map

    rng = np.random.default_rng(7)
    for _ in range(40):
        toks = rng.integers(0, 3, 120).tolist()
        spans = sorted(rng.choice(np.arange(1, 100), 4, replace=False).tolist())
        maps = []
        for few in (ngram_map.FEW_POSITIONS, 0):
            monkeypatch.setattr(ngram_map, "FEW_POSITIONS", few)
            k = NgramMapK(3, 4)
            for lo, hi in [(0, spans[0]), (spans[0], spans[1]), (spans[2], spans[3])]:
                k._index(toks, lo, min(hi, lo + 32))
            maps.append(k._key_map.copy())
        assert np.count_nonzero(maps[0]) > 0
        np.testing.assert_array_equal(maps[0], maps[1])


def test_map_k_minimum_history_and_position_zero():
    assert NgramMapK(2, 3).draft([0, 1, 2, 5, 6, 7, 1, 2], 10).tokens == [5, 6, 7]  # history 7 = 2n+m
    assert NgramMapK(2, 3).draft([0, 1, 2, 5, 6, 7, 1], 10).tokens == []  # history 6 < 2n+m
    assert NgramMapK(2, 3).draft([1, 2, 5, 6, 7, 0, 0, 1, 2], 10).tokens == []


def test_map_k_regenerated_answer_forgets_keys_from_the_discarded_part():
    prompt = [0, 5, 6]
    t = prompt + [9, 1, 2, 3, 4, 8, 8, 1, 2]
    k = NgramMapK(2, 2)
    k.begin(prompt)
    assert k.draft(t, 10).tokens == [3, 4]
    k.accept(0)
    assert k.draft(t + [7, 1, 2], 10).tokens == []  # the key is dead for this answer
    k.begin(prompt)  # the answer is regenerated: the context shrank
    assert k.draft(t, 10).tokens == [3, 4]


def test_map_k_regenerated_answer_drops_index_entries_past_the_cut():
    prompt = [0, 5, 6]
    k = NgramMapK(2, 1)
    k.begin(prompt)
    assert k.draft(prompt + [9, 1, 2, 3, 9, 9, 9, 1, 2], 10).tokens == [3]  # indexes [1, 2] at 4
    k.begin(prompt)
    # [1, 2] is at 4 again, but the index forgot it: the linear search finds the newer copy at 7
    assert k.draft(prompt + [9, 1, 2, 7, 1, 2, 8, 9, 9, 9, 1, 2], 10).tokens == [8]


def test_map_context_shrunk_below_the_last_prompt_keeps_index_entries_before_cut_minus_n_minus_m():
    k = NgramMapK(1, 1)
    k.begin([0, 1, 5, 2, 6, 9, 9, 9, 9])
    k.draft([0, 1, 5, 2, 6, 9, 9, 9, 9, 3], 10)  # indexes [5] at 2
    k.begin([0, 1, 5, 2])  # an earlier message was edited: the cut is at 4 - n - m = 2
    # [5] at 2 is dropped from the index and, as in llama.cpp, not searched linearly again
    assert k.draft([0, 1, 5, 2, 7, 7, 7, 5], 10).tokens == []


def test_k4v_drafts_the_clearly_most_frequent_value_not_the_latest():
    t = [0, 1, 2, 3, 3, 1, 2, 3, 3, 1, 2, 4, 4, 9, 9, 9, 9, 1, 2]  # after [1, 2]: [3, 3] twice, then [4, 4]
    assert NgramMapK4V(2, 2).draft(t, 10).tokens == [3, 3]
    assert NgramMapK(2, 2).draft(t, 10).tokens == [4, 4]


def test_k4v_no_draft_without_a_clear_winner_then_repeat_lookups_count_again():
    t = [0, 1, 2, 3, 3, 1, 2, 4, 4, 9, 9, 9, 9, 1, 2]
    k = NgramMapK4V(2, 2)
    assert k.draft(t, 10).tokens == []  # 1 : 1
    # llama.cpp counts from the last match position inclusive, so the same match counts again
    assert k.draft(t, 10).tokens == [4, 4]  # 2 : 1


def test_k4v_single_value_and_min_hits():
    t = [0, 1, 2, 3, 3, 9, 9, 9, 9, 1, 2]
    assert NgramMapK4V(2, 2).draft(t, 10).tokens == [3, 3]
    k = NgramMapK4V(2, 2, min_hits=2)
    assert k.draft(t, 10).tokens == []
    assert k.draft(t, 10).tokens == [3, 3]


@settings(max_examples=150, deadline=None)
@given(st.booleans(), st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), tok_lists, truths, later_turns, n_maxes)
def test_map_matches_llama_cpp_and_drafts_a_continuation(key_only, n, m, min_hits, prompt, truth, later, n_max):
    cls = NgramMapK if key_only else NgramMapK4V
    oracle = OracleMap(n, m, key_only, min_hits)
    run_session(cls(n, m, min_hits), (prompt, truth), later, n_max, oracle, continuation_check(n))


# ---------------------------------------------------------------- ngram-mod


def test_mod_hash_by_hand():
    assert ngram_hash([1, 2]) == 6364136223846793007  # (0*F + 1)*F + 2
    assert ngram_hash([1, 2, 3]) == 1802426098294369350  # ((F + 2)*F + 3) mod 2**64, from C
    mod = NgramMod(n_match=2, n_min=1, n_max=4, table_size=97)
    mod.begin([1, 2, 7])
    assert mod.table[44] == 7  # 6364136223846793007 % 97 == 44
    assert mod.used == 1
    assert mod.draft([5, 1, 2], 10).tokens == [7]


def test_mod_default_table_is_4m_int32_slots():
    mod = NgramMod()
    assert (mod.n_match, mod.n_min, mod.n_max) == (24, 48, 64)
    assert mod.table.dtype == np.int32 and mod.table.size == 4 * 1024 * 1024 and mod.table.nbytes == 16 << 20


def test_mod_last_writer_wins_without_key_check():
    mod = NgramMod(n_match=1, n_min=1, n_max=1, table_size=64)  # n_match 1: slot = token % 64
    mod.begin([5, 6, 9, 5, 7, 9])
    assert mod.draft([0, 5], 10).tokens == [7]
    other = NgramMod(n_match=1, n_min=1, n_max=1, table_size=64)
    other.begin([69, 3])
    assert other.draft([0, 5], 10).tokens == [3]  # 5 was never seen; 69 shares its slot


def test_mod_chain_n_min_and_truncation():
    mod = NgramMod(n_match=1, n_min=3, n_max=5, table_size=64)
    prompt = [10, 11, 12, 13, 14, 15, 16]
    mod.begin(prompt)
    assert mod.draft(prompt + [10], 10).tokens == [11, 12, 13, 14, 15]
    assert mod.draft(prompt + [10], 2).tokens == [11, 12]
    assert mod.draft(prompt + [13], 10).tokens == [14, 15, 16]
    assert mod.draft(prompt + [14], 10).tokens == []  # chain breaks after 2 < n_min
    assert mod.draft(prompt + [14], 1).tokens == []  # n_min applies before truncation


def test_mod_resets_when_a_prompt_leaves_more_than_a_quarter_used():
    mod = NgramMod(n_match=1, table_size=16)
    mod.begin([0, 1, 2, 3, 4])
    assert mod.used == 4 and mod.table[3] == 4  # 4/16 is not above 25%
    mod.begin([8, 9])  # the table is kept across turns: 5/16
    assert mod.used == 0 and (mod.table == -1).all()


def test_mod_adds_generated_ngrams_lazily_in_chunks_over_32():
    mod = NgramMod(n_match=1, n_min=1, n_max=4, table_size=1024)
    t = list(range(100, 110))
    mod.begin(t)  # adds n-grams starting at 0..8
    t += list(range(200, 232))  # history 41: nothing pending beyond 32
    mod.draft(t, 4)
    assert mod.table[109] == -1 and mod.table[200] == -1
    t += [232]  # history 42
    mod.draft(t, 4)
    assert mod.table[109] == 200 and mod.table[200] == 201 and mod.table[230] == 231
    assert mod.table[231] == -1  # the n-gram just before the sampled token waits for the next chunk


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=3, max_size=120), st.integers(1, 5), st.integers(1, 97))
def test_mod_adds_ngrams_one_by_one_as_numpy_does(tokens, n_match, table_size):
    """A round's few n-grams are added in Python, a prompt's many through numpy: the same
    slots, followers (last writer wins) and count of used slots either way."""
    one_by_one, vectorised = (NgramMod(n_match=n_match, table_size=table_size) for _ in range(2))
    monkeypatch = pytest.MonkeyPatch()
    end = len(tokens) - n_match  # the last n-gram with a follower starts before this
    cut = min(len(tokens) // 2, end)
    for lo, hi in [(0, cut), (cut, end)]:
        one_by_one._add(tokens, lo, hi)
        with monkeypatch.context() as m:
            m.setattr(ngram_mod, "FEW_POSITIONS", 0)
            vectorised._add(tokens, lo, hi)
    assert np.array_equal(one_by_one.table, vectorised.table) and one_by_one.used == vectorised.used


def test_mod_resets_after_five_low_acceptance_rounds_in_a_row():
    prompt = list(range(10))
    mod = NgramMod(n_match=1, n_min=1, n_max=4, table_size=1024)
    mod.begin(prompt)
    for accepted in (0, 0, 0, 0, 1, 0, 0, 0, 0):  # 1/4 is not below 25%: the streak restarts
        assert mod.draft(prompt + [1], 10).tokens == [2, 3, 4, 5]
        mod.accept(accepted)
    assert mod.used == 9
    assert mod.draft(prompt + [1], 10).tokens == [2, 3, 4, 5]
    mod.accept(0)
    assert mod.used == 0 and mod.draft(prompt + [1], 10).tokens == []
    long = prompt + list(range(10, 40))
    assert mod.draft(long + [1], 10).tokens == [2, 3, 4, 5]  # after a reset the whole history is added again


def test_mod_acceptance_is_measured_over_the_returned_tokens():
    prompt = list(range(10))
    mod = NgramMod(n_match=1, n_min=1, n_max=4, table_size=1024)
    mod.begin(prompt)
    for _ in range(6):
        assert mod.draft(prompt + [1], 1).tokens == [2]
        mod.accept(1)  # 1 of 1 (llama.cpp would count 1 of 4 here)
    assert mod.used == 9
    for _ in range(5):
        mod.draft(prompt + [1], 1)
        mod.accept(0)
    assert mod.used == 0


mod_configs = st.tuples(st.integers(1, 3), st.integers(0, 4), st.integers(1, 8), st.sampled_from([7, 61, 509, 1 << 20]))


@settings(max_examples=150, deadline=None)
@given(mod_configs, tok_lists, truths, later_turns, n_maxes)
def test_mod_matches_llama_cpp(config, prompt, truth, later, n_max):
    n_match, n_min, n_max_cfg, size = config
    mod = NgramMod(n_match, n_min, n_max_cfg, table_size=size)
    run_session(mod, (prompt, truth), later, n_max, OracleMod(n_match, n_min, n_max_cfg, size))


@settings(max_examples=150, deadline=None)
@given(mod_configs, tok_lists, truths, later_turns, n_maxes)
def test_mod_drafts_followers_of_their_context(config, prompt, truth, later, n_max):
    """Each drafted token followed, somewhere in any context so far, an n-gram in its
    context's slot (the context itself, barring hash collisions); no short drafts."""
    n_match, n_min, n_max_cfg, size = config
    mod = NgramMod(n_match, n_min, n_max_cfg, table_size=size)
    seen = set()

    def observe(seq):
        for i in range(len(seq) - n_match):
            seen.add((ngram_hash(seq[i : i + n_match]) % size, seq[i + n_match]))

    class Observing:
        def begin(self, prompt):
            observe(prompt)
            mod.begin(prompt)

        def draft(self, tokens, n_max):
            observe(tokens)
            return mod.draft(tokens, n_max)

        def accept(self, n_accepted):
            mod.accept(n_accepted)

    def check(seq, draft):
        assert not draft or len(draft) >= min(n_min, n_max_cfg, n_max)
        ext = seq + draft
        for k, token in enumerate(draft):
            context = ext[len(seq) - n_match + k : len(seq) + k]
            assert (ngram_hash(context) % size, token) in seen

    run_session(Observing(), (prompt, truth), later, n_max, check=check)


# ---------------------------------------------------------------- ngram-cache


@pytest.mark.parametrize(
    "tokens, expected",
    [
        ([1, 7, 2, 1, 7, 3, 1, 8, 4, 1], [7]),  # 1-gram: 2 of 3 = 67% >= 66%, 3 samples >= 2
        ([1, 7, 2, 1, 7, 3, 1, 8, 5, 1, 9, 4, 1], []),  # 1-gram: 2 of 4 = 50% < 66%
        ([1, 7, 4, 1], []),  # 1-gram: 1 sample < 2
        ([1, 2, 7, 1, 2, 8, 4, 1, 2], [8]),  # 2-gram: 1 of 2 = 50% >= 50%; a tie goes to the one first seen last
        ([1, 2, 7, 1, 2, 8, 1, 2, 9, 4, 1, 2], []),  # 2-gram 33% and 1-gram 33% both fail
        ([1, 2, 7, 5, 1, 2], []),  # 2-gram: 1 sample < 2 (and the 1-gram too)
        ([1, 2, 3, 9, 4, 1, 2, 3], [9]),  # 3-gram: 1 sample is enough
        ([1, 2, 3, 7, 1, 2, 3, 8, 9, 2, 3, 6, 5, 1, 2, 3], [8]),  # 3-gram: 50% (shorter ones 33%)
        ([1, 2, 3, 4, 7, 1, 2, 3, 4, 8, 9, 2, 3, 4, 6, 5, 1, 2, 3, 4], [8]),  # 4-gram: 50%
        ([1, 2, 3, 4, 7, 9, 2, 3, 4, 8, 6, 2, 3, 4, 8, 5, 1, 2, 3, 4], [7]),  # 4-gram: 1 sample beats 3-gram's 8
        ([3, 5, 3, 5, 3, 5, 1, 2, 3, 9, 4, 1, 2, 3], [9]),  # the longest n-gram wins over the 1-gram's 5
    ],
)
def test_cache_thresholds(tokens, expected):
    assert NgramCache().draft(tokens, 1).tokens == expected


def test_cache_drafts_up_to_8_tokens():
    assert NgramCache().draft([5, 7, 5, 7, 5], 64).tokens == [7, 5, 7, 5, 7, 5, 7, 5]
    assert NgramCache().draft([5, 7, 5, 7, 5], 3).tokens == [7, 5, 7]
    assert NgramCache().draft([5], 64).tokens == []


def test_cache_counts_each_round_as_its_own_chunk():
    c = NgramCache()
    for end in range(2, 6):
        assert c.draft([5, 6, 5, 6, 5][:end], 8).tokens == []  # one new token per round: no n-gram inside it
    assert NgramCache().draft([5, 6, 5, 6, 5], 8).tokens != []  # counted in one chunk


def test_cache_begin_starts_over_unless_the_context_extends():
    c = NgramCache()
    assert c.draft([1, 2, 3, 9, 4, 1, 2, 3], 1).tokens == [9]
    c.begin([1, 2, 3, 9, 4, 1, 2, 3, 5])
    assert c.draft([1, 2, 3, 9, 4, 1, 2, 3, 5, 1, 2, 3], 1).tokens == [9]
    c.begin([7, 7])
    assert c.draft([7, 7, 1, 2, 3], 1).tokens == []


@settings(max_examples=150, deadline=None)
@given(tok_lists, truths, later_turns, n_maxes)
def test_cache_drafts_followers_of_a_context_suffix(prompt, truth, later, n_max):
    seen = set()
    cache = NgramCache()

    def check(seq, draft):
        for i in range(len(seq)):
            for s in range(1, 5):
                if i >= s:
                    seen.add((tuple(seq[i - s : i]), seq[i]))
        assert len(draft) <= 8
        ext = seq + draft
        for k, token in enumerate(draft):
            end = len(seq) + k
            assert any((tuple(ext[end - s : end]), token) in seen for s in range(1, 5) if end >= s)

    run_session(cache, (prompt, truth), later, n_max, check=check)


# ---------------------------------------------------------------- all types


@pytest.mark.parametrize("spec_type", NGRAM_TYPES)
def test_interface(spec_type):
    """Every n-gram type of the table builds from the defaults and drafts by the n-gram rules."""
    d = registry.build(spec_type, registry.Needs(SpecConfig(), SamplingParams(), None))
    assert d.spec_type == spec_type and isinstance(d, NgramDrafter)
    d.begin([])
    assert d.draft([], 5).tokens == [] and d.draft([1], 5).tokens == []
    d.accept(0)
    assert d.limit(3, 40) == 40  # its own sizes bound its drafts, not --spec-draft-n-max, as in llama.cpp
