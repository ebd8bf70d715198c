"""The auto controller's decision function on synthetic costs and acceptance."""

from __future__ import annotations

import pytest

from spectui.auto import DRAFT, NGRAM, PROBE_START, Controller, Costs, decide, expected_tokens

# This machine's CPU, measured: a batch of 4 costs 1.7x one token, 9 tokens 4x; a 0.5B
# draft step costs 43% of a 1.5B target step.
CPU = Costs(verify={1: 0.066, 4: 0.112, 9: 0.264}, draft_step=0.028)
# A GPU: batches are almost free, the draft is cheap.
GPU = Costs(verify={1: 0.010, 4: 0.0105, 9: 0.011}, draft_step=0.0015)


def flat(a: float, n: int = 64) -> list[float]:
    return [a] * n


def test_expected_tokens():
    assert expected_tokens([0.5, 0.5], 2) == pytest.approx(1 + 0.5 + 0.25)
    assert expected_tokens([1.0, 0.0, 1.0], 3) == 2.0


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


def test_ngram_draft_is_capped_by_the_candidate_and_n_max():
    d = decide(GPU, {NGRAM: flat(0.99), DRAFT: flat(0.0)}, ngram_len=5, has_draft=False, n_max=16)
    assert (d.source, d.k) == (NGRAM, 5)
    d = decide(GPU, {NGRAM: flat(0.99), DRAFT: flat(0.0)}, ngram_len=30, has_draft=False, n_max=3)
    assert (d.source, d.k) == (NGRAM, 3)


def _round(c: Controller, accept_draft: int = 2):
    d = c.choose(ngram_len=0, has_draft=True, n_max=4)
    n = d.k if d.source else 0
    c.observe(d, n, min(n, accept_draft), t_draft=0.028 * n, t_verify=CPU.t_verify(n + 1), t_lookup=0.0,
              ngram_candidate=[], emitted=[1] * (min(n, accept_draft) + 1))
    return d


def test_reprobes_a_switched_off_source_with_backoff():
    c = Controller()
    first = _round(c)
    assert first.source == DRAFT  # never measured: tried once
    decisions = [_round(c) for _ in range(8 * PROBE_START)]
    probes = [i for i, d in enumerate(decisions) if d.source == DRAFT]
    assert probes, "a switched-off draft model must be probed again"
    assert all(decisions[i].reason.startswith("probe") for i in probes)
    assert len(probes) >= 2 and probes[0] >= PROBE_START
    assert probes[1] - probes[0] > probes[0] + 1  # each interval longer than the one before


def test_notices_when_the_machine_gets_faster_for_the_draft():
    c = Controller()
    for _ in range(3):
        _round(c, accept_draft=4)
    assert c.choose(0, True, 4).source is None  # CPU figures: not worth it
    # the draft model gets cheap and batches free (e.g. the other load went away / a GPU)
    for b in range(1, 6):
        c.verify[b] = 0.066
    c.draft_step = 0.002
    assert c.choose(0, True, 4).source == DRAFT


def test_unused_ngram_candidates_still_teach_acceptance():
    c = Controller()
    c.verify = {1: 0.066, 4: 0.112, 9: 0.264}
    before = c.sources[NGRAM].estimates(3)
    none = decide(c.costs(), {NGRAM: flat(0.0), DRAFT: flat(0.0)}, 0, False, 4)
    for _ in range(20):  # the target kept producing exactly what the n-gram proposed
        c.observe(none, 0, 0, 0.0, 0.066, 0.0, ngram_candidate=[5, 6, 7], emitted=[5])
    after = c.sources[NGRAM].estimates(3)
    assert after[0] > 0.9 > before[0]
    assert after[1] == before[1]  # position 2 was never observed
