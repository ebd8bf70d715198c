"""The auto controller's decision function on synthetic costs and acceptance."""

from __future__ import annotations

import pytest

from spectui.engine.auto import (
    DRAFT,
    NGRAM,
    PROBE_BUDGET,
    PROBE_START,
    Controller,
    Costs,
    Decision,
    decide,
)
from spectui.engine.drafting import RoundDraft
from tests.helpers.auto_rounds import observe_round

# This machine's CPU, measured: a batch of 4 costs 1.7x one token, 9 tokens 4x; a 0.5B
# draft step costs 43% of a 1.5B target step.
CPU = Costs(verify={1: 0.066, 4: 0.112, 9: 0.264}, draft_step=0.028)
# A GPU: batches are almost free, the draft is cheap.
GPU = Costs(verify={1: 0.010, 4: 0.0105, 9: 0.011}, draft_step=0.0015)


def flat(a: float, n: int = 64) -> list[float]:
    return [a] * n


def test_expected_tokens_of_a_draft_follow_conditional_acceptance():
    """1 + sum of the products of acceptance up to each position: here 1 + 1 + 0 + 0 = 2
    tokens for the k=3 draft; free batches make the gain that many tokens per step."""
    free = Costs(verify={1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}, draft_step=None)
    d = decide(free, {NGRAM: [1.0, 0.0, 1.0], DRAFT: []}, ngram_len=3, has_draft=False, n_max=3)
    assert (d.source, d.k) == (NGRAM, 1) and d.gain == pytest.approx(2.0)  # k=2, 3 add nothing


def test_interpolates_verify_cost_between_measured_sizes():
    assert CPU.t_verify(4) == 0.112
    assert 0.112 < CPU.t_verify(6) < 0.264


def test_no_draft_when_drafting_cannot_pay_on_a_cpu():
    d = decide(CPU, {DRAFT: flat(0.5), NGRAM: flat(0.1)}, ngram_len=8, has_draft=True, n_max=8)
    assert d.source is None and d.k == 0
    # a marginal expected gain is not worth the risk either
    d = decide(CPU, {DRAFT: flat(0.7), NGRAM: flat(0.1)}, ngram_len=8, has_draft=True, n_max=8)
    assert d.source is None


def test_the_draft_model_pays_on_a_gpu():
    d = decide(GPU, {DRAFT: flat(0.7), NGRAM: flat(0.1)}, ngram_len=8, has_draft=True, n_max=8)
    assert d.source == DRAFT and d.k >= 3 and d.gain > 1.5


def test_ngram_drafts_on_repetition_even_on_a_cpu():
    d = decide(CPU, {DRAFT: flat(0.7), NGRAM: flat(0.97)}, ngram_len=16, has_draft=True, n_max=16)
    # k=3 fits a batch of 4 (1.7x one token); a batch of 9 costs 4x, so longer does not pay
    assert d.source == NGRAM and d.k == 3 and d.gain > 2


def test_long_ngram_drafts_on_repetition_where_batches_are_cheap():
    d = decide(GPU, {DRAFT: flat(0.5), NGRAM: flat(0.97)}, ngram_len=16, has_draft=True, n_max=16)
    assert d.source == NGRAM and d.k >= 12


def test_ngram_draft_is_capped_by_its_candidate_and_n_max_by_the_draft_model():
    d = decide(GPU, {NGRAM: flat(0.99), DRAFT: flat(0.0)}, ngram_len=5, has_draft=False, n_max=16)
    assert (d.source, d.k) == (NGRAM, 5)
    # n-max bounds the draft model; the candidate, its own sizes (as a fixed n-gram type's)
    d = decide(GPU, {NGRAM: flat(0.99), DRAFT: flat(0.0)}, ngram_len=30, has_draft=False, n_max=3)
    assert (d.source, d.k) == (NGRAM, 30)
    d = decide(GPU, {NGRAM: flat(0.0), DRAFT: flat(0.99)}, ngram_len=30, has_draft=True, n_max=3)
    assert (d.source, d.k) == (DRAFT, 3)
    # no room for the draft model: the n-gram candidate still may draft
    assert Controller().choose(ngram_len=4, has_draft=True, n_max=0).reason != "no room to draft"


def test_without_a_draft_model_an_empty_round_says_no_n_gram_matched_not_no_room():
    """f11's note: "no room" would read as a full context where the n-gram only found nothing."""
    assert Controller().choose(ngram_len=0, has_draft=False, n_max=0).reason == "no n-gram match"
    assert Controller().choose(ngram_len=0, has_draft=True, n_max=0).reason == "no room to draft"


def _round(c: Controller, accept_draft: int = 2, behind: int = 0, sync: float = 0.009):
    """One round on the CPU figures; a draft-model round first catches up `behind` tokens."""
    d = c.choose(ngram_len=0, has_draft=True, n_max=4, draft_behind=lambda: behind)
    n = d.k if d.source else 0
    synced = behind if d.source == DRAFT else 0
    dr = RoundDraft(tokens=[1] * n, n_acc=min(n, accept_draft), nxt=1, t_sync=sync * synced, n_synced=synced)
    c.observe(d, dr, 0.028 * n + sync * synced, CPU.t_verify(n + 1))
    return d


def test_the_draft_model_is_not_tried_blind():
    c = Controller(draft_ratio=0.35)
    # Nothing measured yet: no cost to weigh a draft against, so no draft.
    assert c.choose(ngram_len=0, has_draft=True, n_max=4).source is None
    _round(c)
    # After one target step the draft's step is priced by the parameter ratio.
    assert c.costs().draft_step == pytest.approx(0.35 * CPU.t_verify(1))


def test_reprobes_a_switched_off_source_with_backoff_within_the_budget():
    c = Controller(draft_ratio=0.43)
    decisions = []
    for _ in range(20 * PROBE_START):
        decisions.append(_round(c, accept_draft=0))  # the draft model never pays
        assert c.probe_spent <= PROBE_BUDGET * c.elapsed + 1e-9
    probes = [i for i, d in enumerate(decisions) if d.source == DRAFT]
    assert probes, "a switched-off draft model must be probed again"
    assert all(decisions[i].probe and decisions[i].reason.startswith("probe") for i in probes)
    assert not any(d.probe for d in decisions if d.source != DRAFT)
    assert len(probes) >= 3 and probes[0] >= PROBE_START
    gaps = [b - a for a, b in zip(probes, probes[1:])]
    assert gaps[1] > gaps[0]  # backing off: each interval longer than the one before
    assert c.draft_step == pytest.approx(0.028)  # measured, replacing the prior


def test_a_draft_cache_far_behind_defers_the_probe():
    def first_probe(behind: int) -> int:
        c = Controller(draft_ratio=0.43)
        for i in range(2000):
            if _round(c, behind=behind).source == DRAFT:
                return i
        return 2000

    near, far = first_probe(0), first_probe(300)
    # Two draft steps and a bigger batch (~0.1 s) fit 2% of the time after ~80 rounds.
    assert PROBE_START <= near < 100
    # 300 tokens to catch up (~2.7 s at 9 ms/token) wait until 2% of the time generated
    # covers them: 2.7 s / 0.02 / 66 ms per round = about 2000 rounds.
    assert far > 1000


def test_catching_up_is_not_counted_as_draft_step_cost():
    c = Controller(draft_ratio=0.43)
    while _round(c, behind=40).source != DRAFT:
        pass
    assert c.draft_step == pytest.approx(0.028)
    assert c.draft_sync == pytest.approx(0.009)


def test_notices_when_the_machine_gets_faster_for_the_draft():
    c = Controller(draft_ratio=0.43)
    for _ in range(3 * PROBE_START):
        _round(c, accept_draft=4)
    assert c.choose(0, True, 4).source is None  # CPU figures: not worth it
    # the draft model gets cheap and batches free (e.g. the other load went away / a GPU)
    for b in range(1, 6):
        c.verify[b] = 0.066
    c.draft_step = 0.002
    assert c.choose(0, True, 4).source == DRAFT


def test_a_draft_cache_far_behind_must_repay_its_catch_up_before_the_answer_ends():
    c = Controller(draft_ratio=0.43)
    c.verify, c.draft_step, c.draft_sync = dict(GPU.verify), GPU.draft_step, 0.004
    for _ in range(8):  # the draft model agrees with the target: on these figures it pays
        c.sources[DRAFT].observe(4, 4)
    in_sync = c.choose(0, True, 4, draft_behind=lambda: 0, tokens_left=20)
    assert in_sync.source == DRAFT
    # 500 tokens to catch up (2 s) cannot pay back over 20 tokens, nor over the 64 an
    # answer of unknown length is expected to take after 64 tokens; over 10,000 it can.
    assert c.choose(0, True, 4, draft_behind=lambda: 500, tokens_left=20).source is None
    assert c.choose(0, True, 4, draft_behind=lambda: 500, tokens_done=64).source is None
    assert c.choose(0, True, 4, draft_behind=lambda: 500, tokens_left=10_000).source == DRAFT


def test_other_load_scales_every_cost_alike():
    c = Controller(draft_ratio=0.43)
    c.verify, c.draft_step, c.draft_sync = dict(CPU.verify), CPU.draft_step, 0.009
    for i in range(8):  # half the drafts right through, half wrong from the first token
        c.sources[DRAFT].observe(4, 4 * (i % 2))
    before = c.choose(0, True, 4)
    assert before.source is None  # that does not pay on this CPU
    for _ in range(30):  # the machine gets busy: single steps take 1.5x as long
        c.observe(before, RoundDraft(nxt=1), 0.0, 1.5 * CPU.verify[1])
    assert c.verify[1] == pytest.approx(1.5 * CPU.verify[1], rel=0.01)
    # batches and the draft model slowed alike, though not measured since
    assert c.verify[4] / c.verify[1] == pytest.approx(CPU.verify[4] / CPU.verify[1])
    assert c.draft_step / c.verify[1] == pytest.approx(CPU.draft_step / CPU.verify[1])
    assert c.draft_sync == pytest.approx(1.5 * 0.009, rel=0.01)
    assert c.choose(0, True, 4) == before  # so the draft model looks no cheaper than it is


def test_a_new_text_keeps_costs_and_the_pair_but_ngram_acceptance_only_as_a_prior_and_no_budget():
    c = Controller(draft_ratio=0.43)
    for _ in range(12 * PROBE_START):
        _round(c, accept_draft=0)
    no_draft = decide(c.costs(), {NGRAM: flat(0.5), DRAFT: flat(0.5)}, 0, False, 4)
    _copying(c, no_draft, 30)  # a text where every n-gram candidate was right
    costs, draft_accept = c.costs(), c.sources[DRAFT].estimates(2)
    ngram_accept = c.sources[NGRAM].estimates(2)
    assert draft_accept[0] < 0.5 and min(ngram_accept) > 0.9 and c.elapsed > 0
    c.forget_text()
    assert c.costs() == costs and c.sources[DRAFT].estimates(2) == draft_accept
    assert c.elapsed == c.probe_spent == 0.0 and c.open_candidates == []
    # the next text starts from what the last one left: its first candidate is drafted long
    assert c.sources[NGRAM].estimates(2) == ngram_accept
    d = c.choose(3, False, 3)
    assert (d.source, d.k) == (NGRAM, 3)
    # but as a prior worth two observations: two misses in the new text outweigh it
    for _ in range(2):
        c.observe(no_draft, RoundDraft(candidate=[5, 6, 7], nxt=9), 0.0, 0.066)
    assert c.sources[NGRAM].estimates(1)[0] < 0.5


def test_unused_ngram_candidates_still_teach_acceptance():
    c = Controller()
    c.verify = {1: 0.066, 4: 0.112, 9: 0.264}
    before = c.sources[NGRAM].estimates(3)
    none = decide(c.costs(), {NGRAM: flat(0.0), DRAFT: flat(0.0)}, 0, False, 4)
    _copying(c, none, 20)  # the target kept producing exactly what the n-gram proposed
    after = c.sources[NGRAM].estimates(3)
    assert min(after) > 0.9 > before[0]
    # every position was scored by the tokens of the rounds that followed, none drafted
    assert [len(o) for o in c.sources[NGRAM].obs] == [18, 18, 18]  # the last two still open
    assert [n for _, n in c.open_candidates] == [2, 1]


def test_a_used_ngram_draft_is_scored_past_its_length_by_the_next_rounds():
    c = Controller()
    c.verify = {1: 0.066, 2: 0.09}
    use_one = Decision(NGRAM, 1, 1.2, "expected 1.20x")
    # k=1 drafted and accepted; the target's next token was the candidate's 2nd
    observe_round(c, use_one, [5], 1, 6, 0.09, candidate=[5, 6, 7])
    assert not c.sources[NGRAM].obs and c.open_candidates == [([5, 6, 7], 2)]
    none = Decision(None, 0, 1.0, "no n-gram match")
    observe_round(c, none, [], 0, 8, 0.066, candidate=[])  # not its 3rd
    assert [list(o) for o in c.sources[NGRAM].obs] == [[1], [1], [0]] and not c.open_candidates
    observe_round(c, use_one, [5], 1, 6, 0.09, candidate=[5, 6, 7])
    c.new_turn()  # the next answer's tokens do not score this one's candidate
    observe_round(c, none, [], 0, 7, 0.066, candidate=[])
    assert [len(o) for o in c.sources[NGRAM].obs] == [1, 1, 1]


def _copying(c: Controller, decision: Decision, rounds: int) -> None:
    """`rounds` rounds of text 0, 1, 2, ... that emit one token each, each with a 3-token
    n-gram candidate that the text goes on to match."""
    for i in range(rounds):
        observe_round(c, decision, [], 0, i, 0.066, candidate=[i, i + 1, i + 2])


def test_costs_timed_beforehand_decide_from_the_first_round_and_measured_ones_stay():
    """A controller seeded with a GPU-like curve drafts a repeated n-gram long at once; one seeded
    with this CPU's declines the same draft; a size rounds measured is never overwritten."""
    accept = dict(ngram_len=16, has_draft=False, n_max=16)
    gpu, cpu = Controller(), Controller()
    gpu.seed({b: 0.010 + 0.0001 * b for b in range(1, 17)}, None)
    cpu.seed({1: 0.066, 4: 0.112, 9: 0.264, 16: 0.5}, None)
    for c in (gpu, cpu):
        c.sources[NGRAM].obs = [[1] * 8 + [0] * 2 for _ in range(16)]  # an 80% match
    assert gpu.choose(**accept).k > 8
    assert cpu.choose(**accept).k < 8
    measured = Controller(draft_ratio=0.4)
    measured.verify[1] = 0.05
    measured.seed({1: 0.07, 2: 0.1}, 0.02)
    assert measured.verify == {1: 0.05, 2: 0.1} and measured.draft_step == 0.02
    no_draft_model = Controller()
    no_draft_model.seed({1: 0.07}, 0.02)
    assert no_draft_model.draft_step is None
