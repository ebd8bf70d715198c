"""Statistics over hand-built events, with expected numbers worked out by hand."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spectui.engine.events import PromptDone, StopReason, TurnEnd, TurnStart
from spectui.engine.stats import (
    TypeCounters,
    acceptance,
    config_changes,
    mean_acceptance_length,
    p50_p95,
    per_position_acceptance,
    per_type,
    rolling_acceptance,
    round_latencies,
    speedup,
    summarize,
    timing,
    token_latencies,
)
from tests.helpers.events import a_round


def test_acceptance_counts_tokens_and_ignores_empty_drafts():
    rounds = [a_round(4, 2), a_round(0, 0), a_round(3, 3)]
    assert acceptance(rounds) == (5, 7, 5 / 7)


def test_rolling_acceptance_uses_only_the_last_n_rounds():
    rounds = [a_round(2, 0)] * 8 + [a_round(2, 2)] * 32
    assert acceptance(rounds) == (64, 80, 0.8)
    assert rolling_acceptance(rounds) == (64, 64, 1.0)
    assert rolling_acceptance(rounds, n=34) == (64, 68, 64 / 68)  # 2 bad rounds + 32 good
    assert rolling_acceptance([a_round(2, 1), a_round(0, 0)], n=1) == (0, 0, None)
    with pytest.raises(ValueError):
        rolling_acceptance(rounds, n=0)


def test_mean_acceptance_length_counts_empty_draft_rounds():
    # 5 accepted over 3 verification rounds, one of which drafted nothing.
    assert mean_acceptance_length([a_round(4, 2), a_round(0, 0), a_round(3, 3)]) == 1 + 5 / 3


def test_per_position_with_mixed_draft_lengths():
    # position 0: accepted in 2 of the 3 rounds that drafted >= 1 token
    # position 1: accepted in 1 of the 2 rounds that drafted >= 2 tokens
    # position 2: accepted in 0 of the 1 round that drafted 3 tokens
    rounds = [a_round(3, 2), a_round(1, 1), a_round(0, 0), a_round(2, 0)]
    assert per_position_acceptance(rounds) == [2 / 3, 1 / 2, 0.0]


def test_per_type_follows_each_rounds_spec_type():
    rounds = [
        a_round(3, 0, by="ngram-mod", t_draft=0.01, t_verify=0.10),
        a_round(0, 0, by="ngram-mod", spec_type="ngram-mod", t_draft=0.02, t_verify=0.05),
        a_round(2, 1, by="draft-simple", t_draft=0.30, t_verify=0.20),
        a_round(4, 4, by="draft-simple", t_draft=0.30, t_verify=0.20),
        a_round(0, 0, by="none", t_draft=0.0, t_verify=0.05),
    ]
    got = per_type(rounds)
    assert set(got) == {"ngram-mod", "draft-simple"}
    assert got["ngram-mod"] == TypeCounters(1, 0, 3, 0, pytest.approx(0.03), pytest.approx(0.15))
    assert got["draft-simple"] == TypeCounters(2, 2, 6, 5, pytest.approx(0.6), pytest.approx(0.4))


def test_config_changes_marks_type_n_max_and_verify_changes():
    rounds = [
        a_round(1, 1, by="ngram-mod"),
        a_round(1, 1, by="ngram-mod"),
        a_round(1, 1, by="ngram-mod", n_max=4),
        a_round(1, 1, by="draft-simple", n_max=4),
        a_round(1, 1, by="draft-simple", n_max=4, verify="rejection"),
        a_round(1, 1, by="draft-simple", n_max=4, verify="rejection"),
        # the same configuration, but this round nothing drafted: not a change
        a_round(0, 0, by="draft-simple", n_max=4, verify="rejection"),
    ]
    assert config_changes(rounds) == [2, 3, 4]


def turn(rounds, end=True):
    events = [
        TurnStart(t=10.0, n_prompt=5, n_prompt_decoded=5, n_ctx=512, config={}),
        PromptDone(t=10.5, t_prompt=0.5),
        *rounds,
    ]
    if end:
        events.append(TurnEnd(t=11.5, stop_reason=StopReason.EOS, text="", n_generated=7))
    return events


def test_ttft_and_tok_per_s_from_known_timestamps():
    rounds = [
        a_round(2, 0, t=10.6, pieces=(), t_draft=0.01, t_verify=0.05, t_other=0.01),
        a_round(2, 1, t=10.7, t_draft=0.02, t_verify=0.06, t_other=0.02),
        a_round(4, 4, t=11.1, t_draft=0.03, t_verify=0.07, t_other=0.03),
    ]
    tm = timing(turn(rounds))
    assert tm.ttft_s == pytest.approx(0.7)  # the first round emitted nothing
    assert tm.tok_per_s == pytest.approx(7 / 0.6)  # 7 tokens, PromptDone 10.5 -> last round 11.1
    assert tm.tok_per_s_e2e == pytest.approx(7 / 1.5)  # TurnStart 10.0 -> TurnEnd 11.5
    assert (tm.t_draft_s, tm.t_verify_s, tm.t_other_s) == pytest.approx((0.06, 0.18, 0.06))
    # A turn still running ends its e2e window at the last round.
    assert timing(turn(rounds, end=False)).tok_per_s_e2e == pytest.approx(7 / 1.1)


def test_itl_shares_a_rounds_wait_among_its_tokens():
    # Gaps since the previous arrival: 0.1 s for 1 token, 0.1 s for 4 tokens, 0.3 s for 1.
    rounds = [a_round(0, 0, t=10.6), a_round(3, 3, t=10.7), a_round(2, 0, t=11.0)]
    assert token_latencies(rounds, 10.5) == pytest.approx([0.1, 0.025, 0.025, 0.025, 0.025, 0.3])
    assert round_latencies(rounds, 10.5) == pytest.approx([0.1, 0.1, 0.3])
    tm = timing(turn(rounds))
    # Per token, sorted [.025 x4, .1, .3]: p50 at rank 2.5 -> .025, p95 at rank 4.75 -> .25.
    assert (tm.itl_p50_s, tm.itl_p95_s) == pytest.approx((0.025, 0.25))
    # Per round, sorted [.1, .1, .3]: p50 -> .1, p95 at rank 1.9 -> .28.
    assert (tm.round_p50_s, tm.round_p95_s) == pytest.approx((0.1, 0.28))


def test_summary_as_dict_is_json_friendly():
    rounds = [
        a_round(3, 2, t=10.6, by="ngram-mod"),
        a_round(2, 0, t=10.8, by="draft-simple"),
        a_round(0, 0, t=10.9, by="none"),
    ]
    d = summarize(turn(rounds)).as_dict()
    assert d == json.loads(json.dumps(d))
    assert {
        k: d[k]
        for k in (
            "n_generated",
            "n_drafted",
            "n_accepted",
            "acceptance_rate",
            "rounds",
            "stop_reason",
            "spec_types",
            "per_position",
        )
    } == {
        "n_generated": 5,
        "n_drafted": 5,
        "n_accepted": 2,
        "acceptance_rate": 0.4,
        "rounds": 3,
        "stop_reason": "eos",
        "spec_types": ["ngram-mod", "draft-simple"],
        "per_position": [0.5, 0.5, 0.0],
    }
    assert d["mean_acceptance_length"] == pytest.approx(1 + 2 / 3)
    assert d["per_type"]["draft-simple"] == {
        "gen_drafts": 1,
        "acc_drafts": 0,
        "gen_tokens": 2,
        "acc_tokens": 0,
        "t_draft_s": 0.0,
        "t_verify_s": 0.0,
    }
    assert {
        "tok_per_s",
        "tok_per_s_e2e",
        "ttft_s",
        "itl_p50_s",
        "itl_p95_s",
        "t_draft_s",
        "t_verify_s",
        "t_other_s",
    } <= d.keys()


def test_empty_input_gives_none_not_errors():
    assert acceptance([]) == (0, 0, None)
    assert rolling_acceptance([]) == (0, 0, None)
    assert mean_acceptance_length([]) is None
    assert per_position_acceptance([]) == []
    assert per_type([]) == {}
    assert config_changes([]) == []
    d = summarize([]).as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["n_generated"] == d["rounds"] == 0 and d["stop_reason"] is None
    for key in (
        "acceptance_rate",
        "mean_acceptance_length",
        "tok_per_s",
        "tok_per_s_e2e",
        "ttft_s",
        "itl_p50_s",
        "itl_p95_s",
        "round_p50_s",
        "round_p95_s",
    ):
        assert d[key] is None, key


def test_speedup():
    assert speedup(30.0, 12.0) == 2.5
    assert speedup(None, 12.0) is None
    assert speedup(30.0, None) is None
    assert speedup(30.0, 0.0) is None


def test_summarize_refuses_several_turns():
    with pytest.raises(ValueError):
        summarize(turn([a_round(1, 1, t=10.6)]) + turn([a_round(1, 1, t=10.6)]))


# (n_drafted, n_accepted <= n_drafted, n_tokens, gap since previous round end)
round_specs = st.lists(
    st.tuples(st.integers(0, 8), st.floats(0, 1), st.integers(0, 5), st.floats(0.001, 1.0)),
    max_size=40,
)


def build(specs):
    t, out = 10.5, []
    for i, (n_drafted, frac, n_tokens, gap) in enumerate(specs):
        t += gap
        out.append(
            a_round(
                n_drafted, int(frac * n_drafted), t=t, pieces=("x",) * n_tokens, by=("ngram-mod", "draft-simple")[i % 2]
            )
        )
    return out


@given(round_specs)
def test_counts_are_conserved(specs):
    """Position counts add up to the accepted total and per-type counters partition it."""
    rounds = build(specs)
    n_accepted, n_drafted, rate = acceptance(rounds)
    assert 0 <= n_accepted <= n_drafted
    assert rate is None or 0 <= rate <= 1
    rates = per_position_acceptance(rounds)
    assert len(rates) == max((r.n_drafted for r in rounds), default=0)
    assert all(0 <= x <= 1 for x in rates)
    # rate_i x (rounds drafting past i) is the count accepted at i; the counts sum to the total.
    reached = [sum(r.n_drafted > i for r in rounds) for i in range(len(rates))]
    assert sum(x * n for x, n in zip(rates, reached)) == pytest.approx(n_accepted)
    types = per_type(rounds).values()
    assert sum(c.gen_tokens for c in types) == n_drafted
    assert sum(c.acc_tokens for c in types) == n_accepted
    assert all(c.acc_drafts <= c.gen_drafts for c in types)
    mal = mean_acceptance_length(rounds)
    assert mal is None or 1 <= mal <= 1 + max(r.n_drafted for r in rounds)


@given(round_specs)
def test_itl_samples_account_for_all_generation_time(specs):
    """One sample per emitted token, and the samples add up to PromptDone -> last arrival."""
    rounds = build(specs)
    samples = token_latencies(rounds, 10.5)
    assert len(samples) == sum(len(r.tokens) for r in rounds)
    last_arrival = max((r.t for r in rounds if r.tokens), default=10.5)
    assert math.isclose(sum(samples), last_arrival - 10.5, abs_tol=1e-9)


# No deadline: numpy's first np.percentile in the process imports numpy.ma, which on a
# busy machine took the first example past Hypothesis's 200 ms (a flaky failure).
@settings(deadline=None)
@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=300))
def test_p50_p95_are_numpys_linear_percentiles(samples):
    """The pure-Python percentiles (no numpy.ma import mid-answer) give numpy's figures."""
    want = np.percentile(samples, [50, 95], method="linear")
    assert p50_p95(samples) == pytest.approx(tuple(want), rel=1e-12, abs=1e-12)
    assert p50_p95([]) == (None, None)


def test_overhead_is_never_negative_when_llama_cpp_timings_exceed_the_wall_clock():
    """A server reports its own timings, a little more than the client's clock saw: 0, not -0.00."""
    events = [
        TurnStart(t=0.0, n_prompt=3, n_prompt_decoded=3, n_ctx=64, config={}),
        PromptDone(t=1.0, t_prompt=1.0),
        a_round(t=1.5, t_llama=0.6),
        a_round(t=2.0, t_llama=0.6),
    ]
    assert timing(events).overhead_ms_per_round == 0.0
    events[-1] = a_round(t=2.0, t_llama=0.4)
    assert timing(events).overhead_ms_per_round == pytest.approx(1000 * (1.0 - 1.0) / 2)
    events[-1] = a_round(t=2.2, t_llama=0.4)
    assert timing(events).overhead_ms_per_round == pytest.approx(1000 * (1.2 - 1.0) / 2)
