"""One rule decides whether a speedup is real (engine.noise): the bench verdict, the chat panel
and the A/B view, fed the same recorded tok/s of `none` and of a configuration, give the same
word. Model-free: each view's own decision path, from synthetic runs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spectui.bench import results, verdict
from spectui.bench.protocol import Config
from spectui.chat.panel import speedup_reading
from spectui.chat.turn import Baseline
from spectui.engine import noise
from spectui.engine.ab import compare, speed
from spectui.spec_config import SpecConfig
from tests.helpers.bench import QA_A, fake_run
from tests.helpers.events import run_events

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


def bench_word(base: tuple[float, ...], spec: tuple[float, ...]) -> str:
    configs = [Config("none", SpecConfig()), Config(SPEC, SpecConfig(types=("ngram-simple",)))]
    runs = [fake_run("none", QA_A, r, v) for r, v in enumerate(base)]
    runs += [fake_run(SPEC, QA_A, r, v, drafted=3, accepted=3) for r, v in enumerate(spec)]
    rows = results.aggregate(runs, configs, {"ko/qa": 1}, repeat=len(base))
    protocol = {"temp": 0.0, "verify": "greedy", "n_predict": 4, "repeat": len(base)}
    said = verdict.verdict("ko/qa", rows, protocol, {"gpus": []})["pays_off"]
    return {"yes": noise.PAYS, "no": noise.LOSES}.get(said, said)


def panel_words(base: tuple[float, ...], spec: tuple[float, ...]) -> set[str]:
    """The panel's word for each of the configuration's answers after the `none` answers."""
    words = set()
    for tok_s in spec:
        shown, _ = speedup_reading(tok_s, 4, 3, Baseline.of(list(base)), replay=False)
        x = tok_s / Baseline.of(list(base)).tok_s
        words.add(
            noise.UNKNOWN
            if shown.endswith("?")
            else noise.WITHIN
            if shown == "no measurable diff."
            else noise.PAYS
            if x > 1
            else noise.LOSES
        )
    return words


def ab_word(base: tuple[float, ...], spec: tuple[float, ...]) -> str:
    """The A/B view of none (A) against the configuration (B), one interleaved pair per run."""
    ids = list(range(12))
    verdicts = [
        compare(run_events("none", ids, 1, 0, a), run_events("ngram-mod", ids, 3, 3, b)) for a, b in zip(base, spec)
    ]
    last = replace(verdicts[-1], speedups=tuple(v.speedup for v in verdicts))
    s = speed(last)
    if s.ratio == "no measurable difference":
        return noise.WITHIN
    if "noise unknown" in s.how:
        return noise.UNKNOWN
    return noise.PAYS if float(s.ratio.lstrip("×")) > 1 else noise.LOSES


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
