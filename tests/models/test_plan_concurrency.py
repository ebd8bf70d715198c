"""`spectui plan --concurrency`: the model of llama-server's rounds at c busy slots on synthetic
costs whose answer the arithmetic gives, the flag's refusals, the section within 80 columns
and its JSON (from the recorded SmolLM2 curve, timings stubbed), and one real multi-sequence
decode on SmolLM2."""

from __future__ import annotations

import json

import pytest

from spectui.cli.setup_flags import levels_of
from spectui.engine import noise
from spectui.plan import concurrency as conc
from spectui.plan import concurrency_report
from spectui.plan.concurrency import NONE, Level, aggregate, predict_levels
from spectui.plan.curve import Curve, Point
from spectui.plan.predict import Drafting, Prediction
from tests.cli_helpers import run_cli
from tests.conftest import Measured

SIZES = tuple(range(1, 30))
pytestmark = pytest.mark.usefixtures("dirs")


def level(c: int, fixed: float, per_token: float, draft: tuple[float, float] | None = None, spread=0.0) -> Level:
    """T(c, b) = fixed + per_token * c * b; the draft model's Td(c, b) likewise from `draft`."""

    def pts(f, a):
        return {64: tuple(Point(b, f + a * c * b, spread) for b in SIZES)}

    return Level(c, Curve(pts(fixed, per_token), pts(*draft) if draft else {}, 0.0, 0.0))


def timed(levels, fixed, per_token, draft=None, spread=0.0) -> dict[int, Level]:
    return {c: level(c, fixed, per_token, draft, spread) for c in {1, *levels}}


def prediction(d: Drafting, spec_type="ngram-simple", n_max=None) -> Prediction:
    return Prediction(spec_type, n_max, d, None, d.alpha, 1.0, 1.0)


NGRAM = Drafting(1.0, 4.0, 2.0, False)  # every round drafts 4 tokens, 2 accepted


def test_where_batches_cost_nothing_more_speculation_pays_at_every_level():
    levels = (1, 2, 4, 8, 16, 64)
    rows = predict_levels(timed(levels, 10.0, 0.0), levels, [prediction(NGRAM)], depth=256)
    none, ngram = rows
    assert none.spec_type == "none" and none.speedup == (1.0,) * len(levels) and none.verdict == "the baseline"
    assert ngram.speedup == pytest.approx((3.0,) * len(levels))  # 1 + 2 tokens a round for one's cost
    assert ngram.break_even is None and ngram.verdict == "pays at every level asked"


def test_where_each_token_costs_the_crossing_is_where_the_arithmetic_puts_it():
    # T = t0 + a c b: speedup (1 + A)(t0 + a c) / (t0 + a c (L + 1)) is 1 at c = A t0 / (a (L - A)) = 10
    levels = (1, 2, 4, 8, 16, 32)
    _, ngram = predict_levels(timed(levels, 10.0, 1.0), levels, [prediction(NGRAM)], depth=256)
    assert ngram.speedup[3] == pytest.approx(3 * 18 / 50)  # c = 8: pays
    assert ngram.speedup[4] == pytest.approx(3 * 26 / 90)  # c = 16: loses
    assert ngram.break_even == 16 and ngram.verdict == "loses from 16 slots"
    _, only_late = predict_levels(timed(levels, 10.0, 1.0), (16, 32), [prediction(NGRAM)], depth=256)
    assert only_late.verdict == "loses at every level asked"


def test_a_draft_model_drafts_for_every_slot_at_once_and_decodes_the_verified_batch_again():
    # target T = 10 + c b, draft Td = 2 + 0.1 c b; n-max 3, 1.5 accepted
    lv = timed((4,), 10.0, 1.0, draft=(2.0, 0.1))
    d = Drafting(1.0, 3.0, 1.5, True)
    cost = (10 + 4 * 4) + 3 * (2 + 0.4) + (2 + 0.1 * 4 * 4)
    assert aggregate(lv[4], lv[1], d, 256) == pytest.approx(4 * 2.5 / cost)


def test_slots_that_draft_beside_slots_that_do_not_cost_a_second_pass():
    # at c = 2 with half the rounds drafting: j = 1 (p 1/2) splits the batch into two ubatches
    lv = timed((2,), 10.0, 1.0)
    d = Drafting(0.5, 4.0, 2.0, False)
    t = {0: 10 + 2 * 1, 1: (10 + 2 * 3) + (10 + 1), 2: 10 + 2 * 5}
    cost = 0.25 * t[0] + 0.5 * t[1] + 0.25 * t[2]
    assert aggregate(lv[2], lv[1], d, 256) == pytest.approx(2 * (1 + 0.5 * 2) / cost)
    assert aggregate(lv[2], lv[1], NONE, 256) == pytest.approx(2 / 12)


def test_a_crossing_within_the_timing_noise_is_said_to_be_uncertain():
    levels = (8, 16)
    quiet = predict_levels(timed(levels, 10.0, 1.0), levels, [prediction(NGRAM)], depth=256)[1]
    noisy = predict_levels(timed(levels, 10.0, 1.0, spread=0.2), levels, [prediction(NGRAM)], depth=256)[1]
    assert not quiet.uncertain and "within noise" not in quiet.verdict
    assert noisy.uncertain and noisy.verdict.endswith("(within noise around it)") and noise.WITHIN in noisy.words
    at = timed(levels, 10.0, 1.0, spread=0.2)
    shown = conc.Concurrency(levels, 256, at, predict_levels(at, levels, [prediction(NGRAM)], depth=256))
    line = next(x for x in concurrency_report.table_lines(shown) if x.startswith("ngram-simple") and "≈" in x)
    assert line.endswith("0.87x loses at 16 ≈"), line  # a space after the speedup: never "0.87xloses"


def test_a_configuration_without_a_measured_acceptance_gets_no_row():
    unknown = Prediction("draft-simple", 3, Drafting(1.0, 3.0, 0.0, True), None, None, None, None)
    no_drafts = prediction(Drafting(0.0, 0.0, 0.0, False))
    rows = predict_levels(timed((2,), 10.0, 1.0), (2,), [unknown, no_drafts], depth=256)
    assert [r.spec_type for r in rows] == ["none"]


@pytest.mark.parametrize("text", ["1,2,4,8", " 4, 1,2", "64", "1,1,2"])
def test_levels_are_sorted_slot_counts(text):
    assert levels_of(text, "--concurrency", conc.MAX_LEVEL, "busy slots") == tuple(
        sorted({int(x) for x in text.split(",")})
    )


@pytest.mark.parametrize("text", ["0", "-1", "2,,4", "1.5", "two", "65", "", "1,2,3,4,5,6,7"])
@pytest.mark.usefixtures("unmeasured")
def test_bad_levels_are_one_line_and_exit_2_before_any_measurement(tmp_path, monkeypatch, text):
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    ran = run_cli("plan", "--preset", "fast", f"--concurrency={text}", reached=Measured)
    lines = [line for line in ran.stderr.splitlines() if not line.startswith("note: ")]
    assert ran.returncode == 2 and len(lines) == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert "--concurrency" in lines[0]


def fake_timings(calls):
    def measure(setup, target, draft, timed_levels, sizes_, filler, status):
        calls.append(list(timed_levels))
        return {c: level(c, 0.004, 0.0005).curve for c in timed_levels}

    return measure


@pytest.mark.usefixtures("cached", "unmeasured")
def test_the_section_fits_80_columns_the_json_holds_it_and_a_second_run_reads_the_cache(monkeypatch):
    calls: list[list[int]] = []
    monkeypatch.setattr(conc, "measure", fake_timings(calls))
    ran = run_cli("plan", "--preset", "fast", "--concurrency", "1,2,4,8")
    assert ran.returncode == 0, ran.stderr
    assert calls == [[1, 2, 4, 8]]
    lines = ran.stdout.splitlines()
    section = lines[lines.index("Several users of one llama-server (-np), every slot busy") :]
    assert max(len(line) for line in section) <= 80  # laid out for 80 columns (the plan above is whole in a file)
    for section in ("Aggregate tok/s at c busy slots", "break-even", "busy slots", "X: crosses none"):
        assert section in ran.stdout
    assert any(line.startswith("ngram-") and ("loses at" in line or "pays" in line) for line in lines)

    again = run_cli("plan", "--preset", "fast", "--concurrency", "1,2,4,8", "--json")
    assert again.returncode == 0 and calls == [[1, 2, 4, 8]]  # from the cache
    doc = json.loads(again.stdout)["concurrency"]
    assert doc["levels"] == [1, 2, 4, 8] and doc["rows"][0]["spec_type"] == "none"
    for row in doc["rows"][1:]:
        assert len(row["tok_per_s"]) == 4 and row["verdict"]
        assert row["break_even_concurrency"] in (None, 1, 2, 4, 8)


@pytest.mark.model
def test_several_sequences_decode_in_one_batch_as_one_sequence_does(smol):
    from spectui.llama.context import Context
    from spectui.llama.context_params import ContextParams
    from spectui.llama.sequences import Sequences

    history, batch = list(range(100, 164)), [200, 201, 202, 203]
    ctx = Context(smol, ContextParams(n_ctx=256))
    try:
        ctx.decode(history)
        alone = ctx.decode_argmax(batch, range(len(batch)))
    finally:
        ctx.close()
    with Sequences(smol, ContextParams(), 8, 128, 8 * 4) as seqs:
        seqs.fill(history)
        assert seqs.decode(batch, 8) == [alone] * 8  # every copied history, one batch
        one = min(seqs.decode_timed(batch[:1], 1) for _ in range(3))
        eight = min(seqs.decode_timed(batch, 8) for _ in range(3))
    assert eight > one > 0  # 32 tokens over 8 caches cost more than one token


def test_timings_that_disagree_with_the_plans_curve_on_none_at_one_slot_say_the_machine_moved():
    """One slot of none is the plan's own single step timed again: far off it (a busy moment in one
    of the two), the section says so beside its noise, never only its own few percent."""
    at = timed((1, 4), 10.0, 1.0)
    rows = predict_levels(at, (1, 4), [prediction(NGRAM)], depth=256)
    here = rows[0].tok_per_s[0]
    agree = conc.Concurrency((1, 4), 256, at, rows, plan_none=here * 1.1)
    assert agree.moved() is None and "note:" not in "\n".join(concurrency_report.table_lines(agree))
    busy = conc.Concurrency((1, 4), 256, at, rows, plan_none=here * 11)
    said = busy.moved()
    assert said is not None and f"{here:.1f} tok/s in these timings and {here * 11:.1f} in the plan's curve" in said
    text = " ".join(concurrency_report.table_lines(busy))
    assert "the machine's speed changed" in " ".join(text.split()) and busy.as_dict()["moved"] == said
