"""The bench verdict's citation, predicted against measured (bench/citation.py, cli/bench_curve.py),
on constructed curves and hand-made runs whose rounds take what the curve says; and one bench
on the tiny synthetic target that times its decodes for real."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from types import SimpleNamespace

import pytest

from spectui.bench import report, results
from spectui.bench.citation import BENCH, PLAN_CACHE, cite
from spectui.bench.peak_memory import MemorySample
from spectui.bench.prompts import Prompt
from spectui.bench.protocol import Config, Measurement, Run
from spectui.cli import bench as bench_command
from spectui.cli import bench_curve
from spectui.cli.bench_curve import Costs, predicted, predictions, unpriced
from spectui.engine.events import PromptDone, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.plan.curve import Curve
from spectui.plan.decodes import DEPTHS
from spectui.plan.observed import drafting_of
from spectui.plan.predict import break_even, speedup
from spectui.spec_config import SpecConfig
from tests.helpers.curves import costs
from tests.helpers.events import a_round

CURVE = costs({1: 1.0, 17: 2.6}, t1=0.02, draft=0.004)  # t(4) = 0.026 s, a draft step 0.004 s
OVER_NONE, OVER_SPEC = 0.001, 0.002
PATTERN = [(3, 3), (3, 1), (3, 2), (3, 0)]  # (drafted, accepted): acceptance 0.5
PROMPT = Prompt("a", "en", "qa", "?")
NONE = Config("none", SpecConfig())
DRAFT = Config("draft-simple n=3", SpecConfig(types=("draft-simple",), draft_n_max=3))


def run(cfg: Config, repeat: int, pattern, slower: float = 1.0, n_past: int = 100) -> Run:
    """A run whose rounds take what CURVE says (the verify `slower` times that), with the
    overheads above outside llama.cpp."""
    t = 100.5
    events: list = [TurnStart(t=100.0, n_prompt=5, n_prompt_decoded=5, n_ctx=4096, config={})]
    events.append(PromptDone(t=t, t_prompt=0.5))
    emitted: list[int] = []
    for i, (k, a) in enumerate(pattern):
        verify, draft = CURVE.t(k + 1, n_past) * slower, k * CURVE.t_draft(1, n_past)
        over = OVER_SPEC if k or not cfg.is_baseline else OVER_NONE
        t += verify + draft + over
        n_past += a + 1
        toks = tuple(Token(7, "x", Source.TARGET) for _ in range(a + 1))
        emitted += [7] * (a + 1)
        events.append(  # a bench's rounds say the types in force (`by`), as the session's do
            a_round(
                k,
                a,
                by=cfg.spec.label,
                tokens=toks,
                index=i,
                t=t,
                t_draft=draft,
                t_verify=verify,
                t_other=over,
                n_past=n_past,
                t_llama=verify + draft,
            )  # fmt: skip
        )
    events.append(TurnEnd(t, StopReason.N_PREDICT, "", len(emitted), tokens=tuple(emitted)))
    return Run.from_events(cfg.label, PROMPT, repeat, events, MemorySample(1000, "rss", None))


def runs(slower: float = 1.0) -> list[Run]:
    out = []
    for i in (0, 1):
        out += [run(NONE, i, [(0, 0)] * 8), run(DRAFT, i, PATTERN * 2, slower)]
    return out


RECORD = {
    "n_predict": 20, "ignore_eos": False, "repeat": 2, "warmup": 1, "temp": 0.0, "top_k": 40, "top_p": 0.95,
    "min_p": 0.05, "seed": 0, "verify": "match", "system": None, "prompts": "shipped", "lang": "en",
    "category": "qa", "limit": 1, "spec_types": ["none", "draft-simple"], "n_max": [3],
}  # fmt: skip
ENVIRONMENT = {
    "server": {"url": "-", "build_info": "b1", "model_ftype": "Q4_1", "spec_types": ["none"], "n_ctx": 4096},
    "models": {"target": {"file": "t.gguf"}},
    "cpu": "a CPU",
    "spectui": "0.1",
    "os": "Linux",
    "gpus": [],
    "cpu_count": 2,
}
META = {"started": "2026-01-01T00:00:00", "duration_s": 1.0, "setup": {"preset": "smollm2", "model": "m"}}


def doc(costs_: Costs | None, rs: list[Run], unpredicted: str | None = None) -> dict:
    pred = predictions(costs_, [NONE, DRAFT], rs) if costs_ else None
    return results.build(
        Measurement(rs), [NONE, DRAFT], [PROMPT], RECORD, ENVIRONMENT, META, pred, unpredicted,
        costs_.as_dict() if costs_ else None,
    )  # fmt: skip


def test_the_prediction_reads_the_recorded_rounds_at_their_mean_depth():
    rs = [run(DRAFT, 0, PATTERN, n_past=100), run(DRAFT, 1, PATTERN, n_past=300)]
    shallow = costs({1: 1.0, 17: 2.6}, t1=0.02, draft=0.004, overhead=0.003)
    deep = costs({1: 1.0, 17: 4.0}, t1=0.03, draft=0.005)  # deeper: a batch costs more
    cached = Costs(Curve({64: shallow.target[64], 512: deep.target[64]}, shallow.draft, 0.003, 0.003), PLAN_CACHE)
    p = predicted(cached, DRAFT, rs, [])
    rounds = [rd for r in rs for rd in r.rounds]
    d = drafting_of(rounds, model=True, n_max=3)
    depth = round(sum(rd.n_past for rd in rounds) / len(rounds))
    assert depth == 207 and p["depth"] == depth
    assert p["predicted_speedup"] == pytest.approx(speedup(cached.curve, d, depth))
    assert p["predicted_speedup"] != pytest.approx(speedup(cached.curve, d, 64))
    assert p["break_even_alpha"] == pytest.approx(break_even(cached.curve, d, depth))
    assert p["measured_alpha"] == pytest.approx(0.5) and p["curve_source"] == "plan cache"
    assert (p["overhead_none_s"], p["overhead_spec_s"]) == (0.003, 0.003)  # the cached curve's own


def test_the_panel_and_the_bench_read_a_run_alike():
    from spectui.chat.panel import plan_reading

    rs = [run(DRAFT, 0, PATTERN * 5), run(DRAFT, 1, PATTERN * 5, n_past=300)]
    p = predicted(Costs(CURVE, PLAN_CACHE), DRAFT, rs, [])
    reading = plan_reading(CURVE, DRAFT.spec, [rd for r in rs for rd in r.rounds], p["depth"])
    assert reading is not None and reading.speedup == p["predicted_speedup"]
    assert reading.break_even == p["break_even_alpha"] and reading.word  # 40 drafts: a side


def test_a_curve_timed_by_the_bench_takes_each_configuration_s_overhead_from_its_runs():
    rs = runs()
    p = predicted(Costs(CURVE, BENCH), DRAFT, rs[1::2], rs[::2])
    assert p["overhead_none_s"] == pytest.approx(OVER_NONE) and p["overhead_spec_s"] == pytest.approx(OVER_SPEC)
    assert p["predicted_tok_per_s_none"] == pytest.approx(1 / (0.02 + OVER_NONE))
    assert Costs(CURVE, BENCH).as_dict()["overhead_spec_s"] is None  # not one for every configuration


def test_runs_that_take_what_the_curve_says_are_cited_as_agreeing():
    d = doc(Costs(CURVE, BENCH), runs())
    [v] = d["verdicts"]
    [c] = v["predictions"]
    assert c["predicted_speedup"] == pytest.approx(c["measured_speedup"], rel=1e-6)
    assert c["flagged"] is False and c["curve_source"] == "measured by the bench"
    be = c["break_even_alpha"]
    assert c["detail"] == (
        f"draft-simple n=3: predicted {c['predicted_speedup']:.2f}x from this machine's decode costs "
        f"(timed after the runs) at the measured acceptance 0.50 (break-even {be:.2f}); "
        f"measured {c['measured_speedup']:.2f}x +-3%"
    )
    assert report.verdict_marks(v)[0] == ("[ok]", c["detail"], False)
    assert d["cost_curve"]["source"] == "measured by the bench" and d["cost_curve"]["target"]["64"][0][0] == 1
    saved = json.loads(json.dumps(d))["verdicts"][0]["predictions"][0]
    for key in ("predicted_speedup", "break_even_alpha", "measured_alpha", "curve_source", "measured_speedup"):
        assert saved[key] == c[key]


def test_a_run_slower_than_its_curve_is_said_plainly(monkeypatch, capsys):
    d = doc(Costs(CURVE, BENCH), runs(slower=1.4))
    [c] = d["verdicts"][0]["predictions"]
    assert c["flagged"] is True and c["measured_speedup"] < c["predicted_speedup"]
    gap = 1 - c["measured_speedup"] / c["predicted_speedup"]
    assert c["detail"].endswith(
        f"; {gap:.0%} below the prediction, more than the 13% that noise and the model's error allow "
        "(the baseline: 47.6 tok/s measured, "
        "47.6 predicted): the baseline ran as predicted, so this configuration costs more than the curve counts"
    )
    monkeypatch.setenv("COLUMNS", "80")
    bench_command.show(d)
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80
    assert set(c["detail"].split()) <= set(out.split())  # wrapped at words, none cut
    assert re.search(r"^  \[!\] +draft-simple n=3: predicted", out, re.M)


def test_the_wording_of_each_case():
    pred = {
        "curve_source": PLAN_CACHE, "predicted_speedup": 0.82, "predicted_tok_per_s_none": 50.0,
        "break_even_alpha": 0.83, "measured_alpha": 0.64, "draft_share": 1.0,
    }  # fmt: skip
    ok = cite("draft-simple n=3", pred, 0.79, 0.04, 0.03)
    assert ok["detail"] == (
        "draft-simple n=3: predicted 0.82x from this machine's decode costs (spectui plan's curve) at the measured "
        "acceptance 0.64 (break-even 0.83); measured 0.79x +-4%"
    )
    assert ok["flagged"] is False
    ngram = pred | {"draft_share": 0.3, "break_even_alpha": None, "curve_source": BENCH}
    faster = cite("ngram-mod", ngram, 1.1, None, 0.03, 50.0)
    assert faster["detail"].startswith(
        "ngram-mod: predicted 0.82x from this machine's decode costs (timed after the runs) at the measured "
        "acceptance 0.64, drafting in 30% of rounds (no break-even: it loses even at acceptance 1); measured "
        "1.10x (noise unknown: one run per prompt); 34% above the prediction, more than the 13% that noise and "
        "the model's error allow "
        "(the baseline: 50.0 tok/s measured, 50.0 predicted): the curve overstates a cost here"
    )
    assert faster["flagged"] is True
    busy = cite("draft-simple n=3", pred, 0.6, 0.04, 0.03, 40.0)["detail"]
    assert busy.endswith(
        "(the baseline: 40.0 tok/s measured, 50.0 predicted): the machine ran slower than its curve (another process?)"
    )
    fast_base = cite("draft-simple n=3", pred, 0.6, 0.04, 0.03, 80.0)["detail"]
    assert fast_base.endswith("the baseline ran faster than its curve, which shrinks the measured speedup")
    inflated = cite("draft-simple n=3", pred, 1.2, 0.04, 0.03, 40.0)["detail"]
    assert inflated.endswith("the baseline ran slower than its curve (another process during its runs?)")
    assert "(it pays at any acceptance)" in cite("x", pred | {"break_even_alpha": 0.0}, 0.8, 0.04, 0.03)["detail"]
    assert cite("auto n=3", {"reason": "why"}, 1.0, 0.04, 0.03)["detail"] == "auto n=3: no prediction: why"


def test_types_a_curve_cannot_price_say_why():
    def cfg(*types):
        return Config(",".join(types), SpecConfig(types=types))

    assert "round by round" in unpriced(cfg("auto"), True)
    assert "several types at once" in unpriced(cfg("ngram-simple", "draft-simple"), True)
    assert "MTP" in unpriced(cfg("draft-mtp"), True)
    assert unpriced(cfg("draft-eagle3"), False) == "no measured step of draft-eagle3's draft"
    assert unpriced(cfg("draft-simple"), True) is None and unpriced(cfg("ngram-mod"), False) is None
    idle = [run(DRAFT, 0, [(0, 0)] * 4)]
    assert predicted(Costs(CURVE, PLAN_CACHE), DRAFT, idle, idle) == {"reason": "nothing was drafted"}


def test_no_curve_is_one_line_and_a_server_s_none():
    [v] = doc(None, runs(), unpredicted="the context (-c 256) is too small")["verdicts"]
    assert [p["detail"] for p in v["predictions"]] == [
        "no prediction from this machine's costs: the context (-c 256) is too small"
    ]
    assert doc(None, runs())["verdicts"][0]["predictions"] == []


class FakeSession:
    """What bench_curve.costs reads of a loaded Session."""

    def __init__(self, n_ctx: int = 4096):
        self.target = SimpleNamespace(path="t.gguf", tokenize_chat=lambda messages: [1, 2, 3])
        self.draft, self.draft_ctx, self.ctx = SimpleNamespace(path="d.gguf"), "draft ctx", SimpleNamespace(n_ctx=n_ctx)


def test_the_curve_comes_from_plan_s_cache_else_is_timed_after_the_runs(monkeypatch):
    timed, said = [], []
    monkeypatch.setattr(bench_curve.identity, "key", lambda setup, target, draft: {"draft": draft})
    monkeypatch.setattr(bench_curve.cache, "load_cached", lambda key: ({"curve": CURVE.as_dict()}, None))

    def measure(target_ctx, draft_ctx, filler, longest, n_max, progress):
        timed.append((draft_ctx, filler[:3], longest, n_max))
        progress("target depth 64", 30.0)  # within 20 s of the first line: not said
        return replace(CURVE, overhead_none=0.0, overhead_spec=0.0)

    monkeypatch.setattr(bench_curve.decodes, "measure_decodes", measure)
    setup, m = SimpleNamespace(), Measurement(runs())
    c, why = bench_curve.costs(FakeSession(), setup, [NONE, DRAFT], m, None, said.append)
    assert (c.source, c.curve, why, timed, said) == (PLAN_CACHE, CURVE, None, [], [])
    monkeypatch.setattr(bench_curve.cache, "load_cached", lambda key: (None, None))
    c, why = bench_curve.costs(FakeSession(), setup, [NONE, DRAFT], m, None, said.append)
    assert c.source == BENCH and (c.curve.overhead_none, c.curve.overhead_spec) == (0, 0)
    assert timed == [("draft ctx", [1, 2, 3], 0, 8)] and said == ["timing this machine's decodes for the verdict"]
    small = bench_curve.costs(FakeSession(n_ctx=256), setup, [NONE, DRAFT], m, None, said.append)
    assert small == (None, "the context (-c 256) is too small to time decodes at 265 tokens")
    stopped = bench_curve.costs(FakeSession(), setup, [NONE, DRAFT], Measurement(runs(), partial=True), None, print)
    assert stopped == (None, "the bench stopped before this machine's decodes were timed")
    auto = Config("auto n=3", SpecConfig(types=("auto",)))
    assert bench_curve.costs(FakeSession(), setup, [NONE, auto], m, None, print) == (
        None,
        "auto changes its drafter round by round; a curve prices one type",
    )


@pytest.mark.model
def test_a_bench_without_a_cached_curve_times_the_decodes_after_its_runs(synthetic, tmp_path, monkeypatch, capsys):
    """The tiny synthetic target drafting for itself: the decodes timed in seconds, cited, kept
    in the result and not in plan's cache."""
    from spectui.cli import main as cli

    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    target, out = str(synthetic("target")), tmp_path / "r.json"
    args = ["-m", target, "-md", target, "--sweep-types", "draft-simple;ngram-simple", "--sweep-n-max", "2"]
    args += ["--lang", "en", "--category", "qa", "--limit", "1", "--repeat", "1", "-n", "16", "--json", str(out)]
    assert cli.main(["bench", *args]) == 0
    assert "timing this machine's decodes for the verdict" in capsys.readouterr().err
    d = json.loads(out.read_text(encoding="utf-8"))
    assert d["cost_curve"]["source"] == BENCH and list(d["cost_curve"]["target"]) == [str(x) for x in DEPTHS]
    assert [p[0] for p in d["cost_curve"]["draft"]["64"]] == [1, 2]
    [v] = d["verdicts"]
    cited = {p["config"]: p for p in v["predictions"]}
    assert set(cited) == {"draft-simple n=2", "ngram-simple"}
    draft = cited["draft-simple n=2"]
    assert draft["predicted_speedup"] > 0 and draft["overhead_spec_s"] > 0 and draft["flagged"] in (True, False)
    assert not (tmp_path / "cache").exists()  # the bench never writes plan's cache
