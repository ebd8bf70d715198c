"""One rule decides whether a speedup is real (engine.noise): the bench verdict, the chat panel
and the A/B view, fed the same recorded tok/s of `none` and of a configuration, give the same
word. Model-free: each view's own decision path, from synthetic runs."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from spectui.bench import concurrency_results, results, verdict
from spectui.bench.protocol import Config
from spectui.chat.outlook import outlook
from spectui.chat.panel import PanelState, speedup_reading
from spectui.chat.turn import Baseline
from spectui.config.resolve import resolve
from spectui.engine import noise
from spectui.engine.ab import compare, speed
from spectui.engine.events import Round
from spectui.plan.acceptance import Calibration
from spectui.plan.acceptance_sources import build_plan
from spectui.plan.concurrency import levels_for, predict_levels
from spectui.plan.curve import Curve
from spectui.plan.predict import DEPTH
from spectui.plan.report import conclusion, table_lines
from spectui.spec_config import SpecConfig
from spectui.tui.widgets.stats_panel import render
from tests.cli_helpers import run_cli
from tests.conftest import RECORDED_CURVE
from tests.helpers.bench import QA_A, fake_run
from tests.helpers.events import a_round, run_events

SPEC = "ngram-simple n=3"
RECORDED = {  # (none's tok/s, the configuration's tok/s) over the same runs: the word all views give
    "clearly faster": ((100.0, 102.0, 99.0), (130.0, 131.0, 129.0), noise.PAYS),
    "clearly slower": ((100.0, 102.0, 99.0), (70.0, 71.0, 69.0), noise.LOSES),
    "within none's own spread": ((95.0, 105.0, 100.0), (104.0, 106.0, 105.0), noise.WITHIN),
    # 2% faster in every run, the runs tight: the A/B's range and the panel's spread alone
    # called this a gain, the bench's floor did not; the floor now holds for all three
    "inside the floor": ((100.0, 100.5, 100.2), (102.0, 102.2, 102.1), noise.WITHIN),
    "one run each": ((100.0,), (130.0,), noise.UNKNOWN),
}


WORDS = (noise.PAYS, noise.LOSES, noise.WITHIN, noise.UNKNOWN)


def said(text: str) -> str:
    """The one engine.noise word a view printed ("within noise" holds no other word)."""
    found = [w for w in WORDS if w in text]
    assert len(found) == 1, text
    return found[0]


def bench_word(base: tuple[float, ...], spec: tuple[float, ...]) -> str:
    configs = [Config("none", SpecConfig()), Config(SPEC, SpecConfig(types=("ngram-simple",)))]
    runs = [fake_run("none", QA_A, r, v) for r, v in enumerate(base)]
    runs += [fake_run(SPEC, QA_A, r, v, drafted=3, accepted=3) for r, v in enumerate(spec)]
    rows = results.aggregate(runs, configs, {"ko/qa": 1}, repeat=len(base))
    protocol = {"temp": 0.0, "verify": "greedy", "n_predict": 4, "repeat": len(base)}
    v = verdict.verdict("ko/qa", rows, protocol, {"gpus": []})
    assert said(v["summary"]) == v["pays_off"]
    return v["pays_off"]


def panel_words(base: tuple[float, ...], spec: tuple[float, ...]) -> set[str]:
    """The panel's word for each of the configuration's answers after the `none` answers."""
    return {said(" ".join(speedup_reading(t, 4, 3, Baseline.of(list(base)), replay=False))) for t in spec}


def ab_word(base: tuple[float, ...], spec: tuple[float, ...]) -> str:
    """The A/B view of none (A) against the configuration (B), one interleaved pair per run."""
    ids = list(range(12))
    verdicts = [
        compare(run_events("none", ids, 1, 0, a), run_events("ngram-mod", ids, 3, 3, b)) for a, b in zip(base, spec)
    ]
    s = speed(replace(verdicts[-1], speedups=tuple(v.speedup for v in verdicts)))
    return said(s.ratio + s.how)


@pytest.mark.parametrize("case", RECORDED)
def test_the_bench_the_panel_and_the_ab_view_give_the_same_word_for_the_same_runs(case):
    base, spec, word = RECORDED[case]
    assert bench_word(base, spec) == word
    assert panel_words(base, spec) == {word}
    assert ab_word(base, spec) == word


def test_the_spread_is_max_minus_min_over_the_median_and_unknown_from_one_sample():
    assert noise.spread([9.0, 10.0, 11.0]) == pytest.approx(0.2)
    assert noise.spread([10.0, None]) is None and noise.spread([0.0, 0.0]) is None
    # the band: the largest measured spread, never under the floor; unknown with none measured
    assert noise.band(0.01, None) == noise.NOISE_FLOOR and noise.band(0.1, 0.2) == 0.2
    assert noise.band(None) is None and noise.judge(1.5, None).word == noise.UNKNOWN
    # the edges belong to the noise: exactly 1 + band is not yet a gain
    assert noise.judge(1.25, 0.25).word == noise.WITHIN and noise.judge(1.26, 0.25).word == noise.PAYS
    assert noise.judge(0.7, 0.1).reason == "×0.70 is below 1 ± 10%"
    # the panel says which band held: none's own spread, or the floor where none varied less
    tight = Baseline.of([100.0, 100.5, 100.2])
    assert speedup_reading(102.0, 4, 3, tight, replay=False)[1] == "×1.02, within the 3% noise floor"


# --- one cached curve and one set of runs: every view that says whether speculation pays ---

SPEC_NGRAM = resolve("fast", {}).spec.with_types("ngram-simple")
CALIBRATION = Calibration.from_dict(json.loads(RECORDED_CURVE.read_text())["calibration"])
# The recorded SmolLM2 curve, each point's spread set, and (flat) every batch costing one step:
# ngram-simple at the calibration's drafting is predicted at ×0.84 (steep) or ×1.2 (flat).
CURVES = {"steep and steady": (0.05, False), "steep and noisy": (0.3, False), "flat and steady": (0.05, True)}


def cached_doc(path: Path, spread: float, flat: bool) -> Curve:
    """Write the recorded curve, so changed, into the plan's cache at `path`; return it."""
    doc = json.loads(path.read_text())
    for pts in doc["curve"]["target"].values():
        for p in pts:
            p[1], p[2] = (pts[0][1] if flat else p[1]), spread
    path.write_text(json.dumps(doc))
    return Curve.from_dict(doc["curve"])


def runs_like(prediction) -> list[Round]:
    """The panel's rounds drafting as the calibration did (its share, length and accepted
    tokens exactly), 20 times over so that the acceptance's own error is small."""
    d = prediction.drafting
    drafts = round(d.share * 118)
    assert drafts == 9 and round(d.length * drafts) == 130 and round(d.accepted * drafts) == 26  # the calibration's
    one = [a_round(14, 3, by=SPEC_NGRAM.label, n_past=DEPTH) for _ in range(8)]
    one += [a_round(18, 2, by=SPEC_NGRAM.label, n_past=DEPTH)]
    one += [a_round(0, 0, by=SPEC_NGRAM.label, n_past=DEPTH) for _ in range(118 - drafts)]
    return one * 20


@pytest.mark.parametrize("case", CURVES)
def test_one_cached_curve_and_one_set_of_runs_get_one_word_from_every_view(case, cached, unmeasured):
    curve = cached_doc(cached, *CURVES[case])
    plan = build_plan(curve, SPEC_NGRAM, DEPTH, calibration=CALIBRATION, ngram=("ngram-simple",))
    row = plan.row("ngram-simple", None)
    assert row is not None and row.speedup is not None and row.noise is not None
    word, s, n = row.word, row.speedup, row.noise
    # the runs: none's repeats spread by the curve's noise, the configuration's at the predicted speedup
    base = (100.0 * (1 - n / 2), 100.0, 100.0 * (1 + n / 2))
    spec = (100.0 * s,) * 3
    listed = json.loads(run_cli("plan", "--preset", "fast", "--json").stdout)["table"]
    json_row = next(r for r in listed if r["spec_type"] == "ngram-simple")
    card = outlook(SPEC_NGRAM, curve, CALIBRATION, True, "spectui plan --preset fast")
    assert card is not None and word in card.line
    panel = PanelState(spec=SPEC_NGRAM, verify="greedy", events=runs_like(row), curve=curve, n_past=DEPTH)
    reading = panel.plan()
    assert reading is not None and reading.word in render(panel).plain
    (conc,) = predict_levels(levels_for({1: curve}, curve), (1,), [row], DEPTH)[1:]
    assert word in conc.verdict
    server = [
        {"level": 1, "server": "none", "agg_tok_per_s": statistics.median(base), "agg_tok_per_s_spread": n}
        | {"drafted_per_request": 0.0, "server_counters": None},
        {"level": 1, "server": "ngram-simple", "agg_tok_per_s": spec[0], "agg_tok_per_s_spread": 0.0}
        | {"drafted_per_request": 12.0, "server_counters": None},
    ]
    served = concurrency_results.verdict(server, 3)
    views = {
        "plan table": said(next(line for line in table_lines(plan) if line.startswith("ngram-simple"))),
        "plan conclusion": said(conclusion(plan)[0]),
        "plan --json": json_row["word"] if json_row["noise"] == pytest.approx(n) else "another noise",
        "plan --concurrency": conc.words[0],
        "card": card.side,
        "panel": reading.word,
        "bench verdict": bench_word(base, spec),
        "concurrency verdict": said(served["summary"].split(";")[0]),
        "A/B view": ab_word(base, spec),
    }
    assert views == dict.fromkeys(views, word), (s, n)
    assert served["levels"][0]["judgement"] == word
