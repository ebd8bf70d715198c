"""spectui bench: aggregation arithmetic on hand-made runs, prompt-file errors, compare,
and real SmolLM2 runs (tiny: 2 prompts, 16 tokens) for the result schema, fixed output
lengths and Ctrl+C keeping partial results."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading

import pytest
from rich.console import Console

from spectui.bench import compare, prompts, report, results, verdict
from spectui.bench.peak_memory import MemorySample
from spectui.bench.prompts import Prompt
from spectui.bench.protocol import Config
from spectui.cli import bench as bench_command
from spectui.cli import bench_progress, bench_tables
from spectui.cli import main as cli
from spectui.cli.loading import loading_line
from spectui.engine import noise
from spectui.errors import UserError
from spectui.spec_config import SpecConfig
from spectui.trace import format as trace_format
from tests.cli_helpers import run_cli
from tests.helpers.bench import (
    AUTO_CFG,
    CONFIGS,
    QA_A,
    QA_B,
    TINY,
    N,
    auto_run,
    cache_tiny_curve,
    fake_run,
    whole_doc,
)
from tests.helpers.processes import interruptible


@pytest.fixture
def spectui():
    """Run `spectui ARGS...` in-process through cli.main (UserError -> exit 2)."""
    return lambda *argv: cli.main(list(argv))


# --------------------------------------------------------------- aggregation by hand


def test_median_ignores_undefined_values():
    assert results.median([3, None, 1, 2]) == 2
    assert results.median([1, 2, 3, 10]) == 2.5
    assert results.median([None]) is None


def test_rows_are_medians_of_per_prompt_medians_and_pool_acceptance():
    base, spec = Config("none", SpecConfig()), Config("ngram-simple n=3", SpecConfig(types=("ngram-simple",)))
    runs = [fake_run("none", p, r, 10.0) for p in (QA_A, QA_B) for r in range(3)]
    # prompt a: 10, 30, 20 tok/s -> 20; prompt b: 5, 7, 6 -> 6; the group: median(20, 6) = 13
    runs += [
        fake_run(spec.label, QA_A, r, v, drafted=2, accepted=acc)
        for r, (v, acc) in enumerate([(10, 2), (30, 2), (20, 1)])
    ]
    runs += [
        fake_run(spec.label, QA_B, r, v, drafted=2, accepted=0, tokens=(1, 2, 9, 9)) for r, v in enumerate([5, 7, 6])
    ]
    rows = results.aggregate(runs, [base, spec], {"ko/qa": 2}, repeat=3)
    b, s = rows
    assert (b["config"], s["config"]) == ("none", "ngram-simple n=3")
    assert b["tok_per_s"] == pytest.approx(10) and s["tok_per_s"] == pytest.approx(13)
    assert s["speedup"] == pytest.approx(1.3)
    assert s["tok_per_s_spread"] == pytest.approx(((30 - 10) / 20 + (7 - 5) / 6) / 2)
    assert s["complete"] and s["n_runs"] == 6 and s["n_prompts"] == 2
    # pooled over all six runs' rounds: 5 accepted of 12 drafted; 1 + 5/6 per round
    assert (s["n_accepted"], s["n_drafted"]) == (5, 12)
    assert s["acceptance_rate"] == pytest.approx(5 / 12)
    assert s["mean_acceptance_length"] == pytest.approx(1 + 5 / 6)
    assert s["ttft_s"] == pytest.approx(((0.5 + 4 / 20) + (0.5 + 4 / 6)) / 2)  # the first token comes with the round
    # agreement: prompt a identical to the baseline, prompt b diverges at token 2
    assert s["divergence"] == {"a": None, "b": 2}
    assert (s["identical_share"], s["first_divergence"]) == (0.5, 2)
    assert s["peak_memory_bytes"] == 1002 and s["memory_source"] == "rss"
    # request latency percentiles over the six runs: 0.5 + 4/v for v in 10,30,20,5,7,6
    lat = sorted(0.5 + 4 / v for v in (10, 30, 20, 5, 7, 6))
    assert s["latency_p50_s"] == pytest.approx((lat[2] + lat[3]) / 2)
    assert s["step"]["target_step_s"] is None and b["step"]["target_step_s"] == pytest.approx(0.4)


def test_a_configuration_that_drafted_nothing_is_noise_not_a_gain():
    configs = [
        Config("none", SpecConfig()),
        Config("ngram-mod n=3", SpecConfig(types=("ngram-mod",))),
        Config("ngram-simple n=3", SpecConfig(types=("ngram-simple",))),
    ]
    runs = [
        fake_run("none", QA_A, 0, 10.0),
        fake_run("ngram-mod n=3", QA_A, 0, 12.0),
        fake_run("ngram-simple n=3", QA_A, 0, 11.0, drafted=3, accepted=3),
    ]
    rows = results.aggregate(runs, configs, {"ko/qa": 1}, repeat=1)
    protocol = {"temp": 0.0, "verify": "match", "n_predict": 4, "repeat": 3}
    v = verdict.verdict("ko/qa", rows, protocol, {"gpus": []})
    # ngram-mod's 1.2x is the baseline's work measured twice: +-20% is the noise here
    assert v["best"] == v["best_speculative"] == "ngram-simple n=3"
    assert v["noise"] == pytest.approx(0.2) and v["pays_off"] == noise.WITHIN
    assert "ngram-mod n=3 drafted nothing" in v["summary"]
    causes = {c["cause"]: c for c in v["causes"]}
    assert causes["low acceptance"]["flagged"] is False and causes["VRAM pressure"]["flagged"] is None
    slower = [fake_run("none", QA_A, 0, 10.0), fake_run("ngram-simple n=3", QA_A, 0, 5.0, drafted=3, accepted=0)]
    v = verdict.verdict("ko/qa", results.aggregate(slower, configs, {"ko/qa": 1}, 1), protocol, {"gpus": []})
    assert v["pays_off"] == noise.LOSES and "low acceptance" in v["summary"]
    # one run per prompt: no repeats, so no noise to judge against
    once = verdict.verdict("ko/qa", rows, {**protocol, "repeat": 1}, {"gpus": []})
    assert once["noise"] is None and once["pays_off"] == noise.UNKNOWN and "the noise is unknown" in once["summary"]


def test_vram_pressure_and_offload_without_a_gpu_here(monkeypatch):
    """The GPU branches, on hand-made device answers (this machine has no GPU)."""
    from spectui.bench import peak_memory
    from spectui.llama import devices

    gpu = devices.Device("CUDA0", "NVIDIA H200", "gpu", free=10 * 2**30, total=140 * 2**30)
    monkeypatch.setattr(devices, "gpus", lambda: [gpu])
    assert peak_memory.sample_memory() == MemorySample(gpu.used, "gpu-total", gpu.used / gpu.total)
    monkeypatch.setattr(devices, "gpus", lambda: [dataclasses.replace(gpu, process_used=5)])
    assert peak_memory.sample_memory().source == "gpu-process"
    env = {
        "gpus": [{"name": "H200", "driver_version": "1"}],
        "llama_cpp": {"gpu_offload": True},
        "models": {"target": {"n_layer": 28}, "draft": {"n_layer": 24}},
        "n_gpu_layers": -1,
        "n_gpu_layers_draft": 10,
    }
    row = {"spec_type": "draft-simple", "gpu_fraction": 0.5}
    c = verdict._vram(row, env)
    assert c["flagged"] and "draft -ngl 10 of 25 layers" in c["detail"]
    assert not verdict._vram({"spec_type": "ngram-mod", "gpu_fraction": 0.5}, env)["flagged"]
    assert verdict._vram({"spec_type": "ngram-mod", "gpu_fraction": 0.95}, env)["flagged"]
    env["llama_cpp"]["gpu_offload"] = False
    assert "without GPU support" in verdict._vram(row, env)["detail"]


def test_incomplete_rows_are_marked():
    base = Config("none", SpecConfig())
    rows = results.aggregate([fake_run("none", QA_A, 0, 10.0)], [base], {"ko/qa": 2}, repeat=1)
    assert not rows[0]["complete"] and rows[0]["n_prompts"] == 1


# --------------------------------------------------------------- auto's breakdown


def test_auto_rows_break_down_its_choices_and_what_probes_and_catch_ups_cost():
    base = Config("none", SpecConfig())
    runs = [fake_run("none", QA_A, 0, 10.0), auto_run(QA_A, 0), auto_run(QA_A, 1, scale=2.0)]
    none, auto = results.aggregate(runs, [base, AUTO_CFG], {"ko/qa": 1}, repeat=2)
    assert "auto" not in none  # the field is an auto configuration's only
    a = auto["auto"]
    assert a["n_rounds"] == 16
    # a draft-model round that drafted nothing drafted nothing: it counts as neither
    assert a["rounds_share"] == {"ngram": 0.25, "draft_model": 0.25, "none": 0.5}
    assert a["draft_model_types"] == ["draft-simple"]
    assert a["drafted"] == {"ngram": 10, "draft_model": 10} and a["accepted"] == {"ngram": 4, "draft_model": 8}
    assert a["n_probes"] == 2 and a["generation_s"] == pytest.approx(3.3)
    # the probe's drafting, its catch-up apart: 0.1 s of each 1.1 s; the catch-up 0.2 s
    assert a["probe_share"] == pytest.approx(0.1 / 1.1) and a["catchup_share"] == pytest.approx(0.2 / 1.1)
    assert a["vs_best_fixed"] is None  # no fixed type in this run: nothing to compare with
    assert report.auto_line(auto).endswith("no fixed type in this run to compare with")


def _with_fixed(auto_scale: float) -> dict:
    configs = [
        Config("none", SpecConfig()),
        Config("ngram-simple", SpecConfig(types=("ngram-simple",))),
        Config("draft-simple n=3", SpecConfig(types=("draft-simple",))),
        AUTO_CFG,
    ]
    runs = [
        fake_run("none", QA_A, 0, 10.0),
        fake_run("ngram-simple", QA_A, 0, 12.0, drafted=2, accepted=1),
        fake_run("draft-simple n=3", QA_A, 0, 14.0, drafted=2, accepted=2),
        fake_run("none", Prompt("c", "ko", "code", "?"), 0, 30.0),  # another group's: no part in ko/qa
        fake_run("draft-simple n=3", Prompt("c", "ko", "code", "?"), 0, 30.0, drafted=2, accepted=2),
        auto_run(QA_A, 0, scale=auto_scale),
    ]
    rows = results.aggregate(runs, configs, {"ko/qa": 1, "ko/code": 1}, repeat=1)
    return next(r for r in rows if "auto" in r)


def test_auto_against_the_best_fixed_type_of_its_group_when_it_lost():
    row = _with_fixed(auto_scale=1.0)  # 14 tokens in 1.1 s
    assert row["tok_per_s"] == pytest.approx(14 / 1.1)
    vs = row["auto"]["vs_best_fixed"]
    assert vs["config"] == "draft-simple n=3" and vs["tok_per_s"] == pytest.approx(14.0)
    assert vs["gain_tok_per_s"] == pytest.approx(14 / 1.1 - 14) and vs["ratio"] == pytest.approx(1 / 1.1)
    line = report.auto_line(row)
    assert line.startswith("auto n=3: rounds drafted by n-gram 25%, by the draft model (draft-simple) 25%")
    # of the rounds by neither, those with a draft to make that auto judged would not pay
    assert "by neither 50% (declined as not paying 25%); n-gram drafted 5 tokens, 2 accepted;" in line
    assert "of generation time, probes 9% (1 round), catch-ups 18%;" in line
    assert line.endswith("vs the best fixed type, draft-simple n=3 at 14.0 tok/s: -1.3 tok/s (0.91x)")


def test_auto_against_the_best_fixed_type_when_it_won():
    vs = _with_fixed(auto_scale=0.5)["auto"]["vs_best_fixed"]  # 14 tokens in 0.55 s
    assert vs["config"] == "draft-simple n=3" and vs["gain_tok_per_s"] == pytest.approx(14 / 0.55 - 14)
    assert vs["ratio"] > 1


def test_auto_breakdown_in_csv_columns_and_report_lines(tmp_path):
    auto = _with_fixed(auto_scale=1.0)
    fixed = {k: v for k, v in auto.items() if k != "auto"} | {"config": "ngram-simple"}
    doc = {"results": [fixed, auto]}
    report.write(doc, None, str(tmp_path / "r.csv"), None)
    with open(tmp_path / "r.csv", encoding="utf-8", newline="") as f:
        other, mine = list(csv.DictReader(f))
    assert "auto" not in mine and other["auto_best_fixed"] == ""  # auto_* cells only in an auto row
    assert mine["auto_best_fixed"] == "draft-simple n=3" and mine["auto_n_probes"] == "1"
    assert float(mine["auto_rounds_none"]) == 0.5
    # what the screen's auto line says of declined rounds and n-gram drafts, as numbers
    assert float(mine["auto_declined_share"]) == 0.25
    assert (mine["auto_drafted_ngram"], mine["auto_accepted_ngram"]) == ("5", "2")
    # the screen and the Markdown report both show these lines under the group's tables
    assert report.auto_lines(doc, "ko/qa") == [report.auto_line(auto)]


# --------------------------------------------------------------- prompts


def test_shipped_prompts_are_20_korean_and_the_same_20_in_english():
    ps = prompts.shipped()
    for lang in ("ko", "en"):
        for cat in ("qa", "code"):
            assert len([p for p in ps if (p.lang, p.category) == (lang, cat)]) == 10
    assert {p.id.split("-", 1)[1] for p in ps if p.lang == "ko"} == {
        p.id.split("-", 1)[1] for p in ps if p.lang == "en"
    }
    assert prompts.select(ps, "ko", "all", None) == [p for p in ps if p.lang == "ko"]
    assert [p.id for p in prompts.select(ps, "all", "code", 2)] == [
        "ko-code-01",
        "ko-code-02",
        "en-code-01",
        "en-code-02",
    ]


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("p.toml", '[[prompt]]\nid = "x"\nlang = "ko"\ntext = "hi"\n', "p.toml: [[prompt]] #1: key 'category'"),
        (
            "p.toml",
            '[[prompt]]\nid = "x"\nlang = "ko"\ncategory = "qa"\ntext = "hi"\ntxet = "y"\n',
            "unknown key 'txet'",
        ),
        ("p.toml", '[[prompt]]\nid = "x"\nlang = "ko"\ncategory = "qa"\ntext = "hi\n', "not valid TOML"),
        (
            "p.jsonl",
            '{"id": "a", "lang": "en", "category": "qa", "text": "hi"}\n{"id": "b", "lang": "en",\n',
            "p.jsonl:2: not valid JSON",
        ),
        (
            "p.jsonl",
            '{"id": "a", "lang": "en", "category": "chat", "text": "hi"}\n',
            "p.jsonl:1: key 'category' is 'chat'",
        ),
        ("p.jsonl", '{"id": "a", "lang": "en", "category": "qa", "text": "hi"}\n' * 2, "prompt id 'a' appears twice"),
        ("p.txt", "hello\n", "must end in .toml or .jsonl"),
    ],
)
def test_bad_prompts_file_is_a_clear_error(spectui, tmp_path, capsys, name, content, expected):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert spectui("bench", "--preset", "smollm2", "--prompts", str(path)) == 2
    err = capsys.readouterr().err
    assert expected in err and str(tmp_path) in err and "Traceback" not in err


def test_missing_prompts_file_names_it(spectui, tmp_path, capsys):
    assert spectui("bench", "--prompts", str(tmp_path / "nope.toml")) == 2
    assert "nope.toml" in capsys.readouterr().err


# --------------------------------------------------------------- compare


def _doc(rows: list[dict], **env) -> dict:
    return {
        "schema": results.SCHEMA,
        "partial": False,
        "interrupted": None,
        "results": rows,
        "protocol": {"n_predict": 256},
        "environment": {"llama_cpp": {"version": "1"}, **env},
    }


def _row(config, tok, speedup, acc, ttft, group="ko/code"):
    return {
        "config": config,
        "group": group,
        "tok_per_s": tok,
        "speedup": speedup,
        "acceptance_rate": acc,
        "ttft_s": ttft,
    }


def test_compare_gives_deltas_per_configuration():
    a = _doc(
        [
            _row("none", 10.0, None, None, 0.2),
            _row("ngram-mod n=3", 12.0, 1.2, 0.5, 0.25),
            _row("ngram-mod n=5", 11.0, 1.1, 0.4, 0.25),
        ]
    )
    b = _doc(
        [
            _row("none", 8.0, None, None, 0.3),
            _row("ngram-mod n=3", 12.0, 1.5, 0.75, 0.2),
            _row("draft-simple n=3", 9.0, 1.1, 0.6, 0.3),
        ],
        threads=4,
    )
    rows = {r["config"]: r for r in compare.diff(a, b)}
    assert rows["none"]["tok_per_s"] == {"a": 10.0, "b": 8.0, "delta": -2.0, "pct": -0.2}
    assert rows["none"]["speedup"]["delta"] is None
    d = rows["ngram-mod n=3"]
    assert d["speedup"]["delta"] == pytest.approx(0.3) and d["speedup"]["pct"] is None
    assert d["acceptance_rate"]["delta"] == pytest.approx(0.25)
    assert d["ttft_s"]["delta"] == pytest.approx(-0.05) and d["ttft_s"]["pct"] == pytest.approx(-0.2)
    assert rows["ngram-mod n=5"]["only"] == "a" and rows["draft-simple n=3"]["only"] == "b"
    assert compare.settings_diff(a, b) == [("environment.threads", None, 4)]


def test_compare_cli_and_a_file_that_is_not_a_result(spectui, tmp_path, capsys):
    pa, pb, bad = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "other.json"
    pa.write_text(json.dumps(_doc([_row("none", 10.0, None, None, 0.2)])))
    pb.write_text(json.dumps(_doc([_row("none", 12.5, None, None, 0.2)])))
    bad.write_text(json.dumps({"text": "a spectui run --json answer"}))
    assert spectui("bench", "compare", str(pa), str(pb)) == 0
    assert "10.0->12.5 +25.0%" in capsys.readouterr().out
    assert spectui("bench", "compare", str(pa), str(bad)) == 2
    assert "other.json is not a spectui bench result" in capsys.readouterr().err
    (tmp_path / "broken.json").write_text("{")
    assert spectui("bench", "compare", str(tmp_path / "broken.json"), str(pa)) == 2
    assert "not JSON" in capsys.readouterr().err


# --------------------------------------------------------------- real runs (SmolLM2)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One tiny real bench run shared by the tests below: its exit code and written files."""
    out = tmp_path_factory.mktemp("bench")
    files = {k: out / f"r.{k}" for k in ("json", "csv", "md")}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPECTUI_CACHE_DIR", str(out / "cache"))
        cached = cache_tiny_curve()
        before = cached.read_bytes()
        rc = cli.main(
            TINY
            + [
                "--repeat",
                "2",
                "--json",
                str(files["json"]),
                "--csv",
                str(files["csv"]),
                "--markdown",
                str(files["md"]),
                "--trace",
                str(out / "traces"),
            ]
        )
    assert cached.read_bytes() == before and len(list(cached.parent.iterdir())) == 1  # read, never written
    files["traces"] = out / "traces"
    return rc, json.loads(files["json"].read_text(encoding="utf-8")), files


@pytest.mark.model
def test_tiny_run_result_schema(tiny):
    rc, doc, _ = tiny
    assert rc == 0 and doc["schema"] == "spectui-bench/1" and doc["partial"] is False
    assert [c["label"] for c in doc["configs"]] == CONFIGS
    p = doc["protocol"]
    assert (p["n_predict"], p["ignore_eos"], p["repeat"], p["warmup"], p["temp"]) == (N, True, 2, 1, 0.0)
    assert "median" in p
    env = doc["environment"]
    for key in ("spectui", "llama_cpp_python", "n_ctx", "n_batch", "threads", "gpus", "cpu", "os"):
        assert key in env
    assert env["threads"] == 1 and "AVX" in env["llama_cpp"]["system_info"]
    target = env["models"]["target"]
    assert target["quant"] == "Q4_1" and target["sha256_source"] == "catalog" and len(target["sha256"]) == 16
    assert [(r["config"], r["group"]) for r in doc["results"]] == [
        (c, g) for c in CONFIGS for g in ("en/qa", "en/code")
    ]
    numbers = ("tok_per_s", "tok_per_s_e2e", "ttft_s", "latency_p50_s", "latency_p95_s", "itl_p50_s", "itl_p95_s")
    for row in doc["results"]:
        assert row["complete"] and row["n_runs"] == 2 and row["n_generated"] == N
        assert all(isinstance(row[k], float) and row[k] > 0 for k in numbers)
        assert isinstance(row["peak_memory_bytes"], int) and row["memory_source"] == "rss"
        if row["config"] == "none":
            assert row["speedup"] is None and row["n_drafted"] == 0
        else:
            assert isinstance(row["speedup"], float) and 0 <= row["identical_share"] <= 1
            assert set(row["divergence"]) == {f"en-{row['category']}-01"}
    draft = next(r for r in doc["results"] if r["config"] == "draft-simple n=2")
    assert draft["n_drafted"] > 0 and draft["step"]["draft_cost_ratio"] > 0
    for row in doc["results"]:  # auto's breakdown, in its rows only
        assert ("auto" in row) == (row["config"] == "auto n=2")
        if "auto" in row:
            a = row["auto"]
            assert a["n_rounds"] > 0 and sum(a["rounds_share"].values()) == pytest.approx(1)
            assert 0 <= a["probe_share"] < 1 and 0 <= a["catchup_share"] < 1
            assert a["vs_best_fixed"]["config"] in ("draft-simple n=2", "ngram-simple")
    assert {v["group"] for v in doc["verdicts"]} == {"en/qa", "en/code"}
    assert doc["cost_curve"]["source"] == "plan cache" and doc["cost_curve"]["draft"]
    for v in doc["verdicts"]:
        cited = {p["config"]: p for p in v["predictions"]}
        assert list(cited) == CONFIGS[1:]
        draft_pred = cited["draft-simple n=2"]
        assert draft_pred["predicted_speedup"] > 0 and 0 <= draft_pred["measured_alpha"] <= 1
        assert draft_pred["curve_source"] == "plan cache" and "break_even_alpha" in draft_pred
        assert draft_pred["detail"].startswith("draft-simple n=2: predicted ")
        assert cited["auto n=2"]["flagged"] is None and "round by round" in cited["auto n=2"]["detail"]
        assert v["pays_off"] in (noise.PAYS, noise.LOSES, noise.WITHIN) and v["best"] in CONFIGS
        assert {c["cause"] for c in v["causes"]} >= {
            "draft cost",
            "low acceptance",
            "short outputs",
            "high temperature",
            "VRAM pressure",
        }


@pytest.mark.model
def test_every_run_generates_exactly_n_tokens(tiny):
    _, doc, _ = tiny
    assert len(doc["runs"]) == len(CONFIGS) * 2 * 2  # warm-ups are not recorded
    assert all(r["n_generated"] == N and len(r["tokens"]) == N and r["stop_reason"] == "n-predict" for r in doc["runs"])
    assert not [w for w in doc["warnings"] if "tokens, not" in w]


@pytest.mark.model
def test_trace_per_run_replays_the_run_the_result_holds(tiny):
    _, doc, files = tiny
    traces = {p.name: trace_format.read(p) for p in files["traces"].glob("*.jsonl")}
    assert len(traces) == len(CONFIGS) * (1 + 2 * 2)  # a warm-up per configuration, then 2 passes x 2 prompts
    for run in doc["runs"]:
        label = f"pass{run['repeat'] + 1}-{run['config']}-{run['prompt']}"
        [trace] = [t for name, t in traces.items() if name == re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + ".jsonl"]
        [turn] = trace.turns
        assert list(turn.end.tokens) == run["tokens"] and turn.label.startswith(run["config"])
        assert trace.header["settings"]["n_predict"] == N and trace.header["recorded_by"] == "spectui bench"
    assert sum(name.startswith("warmup-") for name in traces) == len(CONFIGS)


@pytest.mark.model
def test_tiny_run_csv_markdown_and_screen(tiny):
    _, doc, files = tiny
    lines = files["csv"].read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("config,spec_type,n_max,group") and len(lines) == 1 + len(doc["results"])
    md = files["md"].read_text(encoding="utf-8")
    assert "## en/code" in md and "| ngram-simple |" in md and "verdict (en/qa)" in md
    assert md.count("- auto n=2: rounds drafted by n-gram") == 2 and "vs the best fixed type" in md
    console = Console(record=True, width=100)
    console.print(bench_tables.render(doc))
    screen = console.export_text()
    assert "draft-simple n=2" in screen and "auto n=2: rounds drafted by" in screen
    for group in report.groups(doc):  # whole, not wrapped at its narrower table's width
        assert report.title(doc, group) in screen.splitlines()
    assert "draft-simple n=2: predicted" in md and "draft-simple n=2: predicted " in " ".join(screen.split())
    narrow = Console(record=True, width=80)
    narrow.print(bench_tables.render(doc))
    assert "…" not in narrow.export_text()  # every table readable at 80 columns, no cell cut
    ran = "models smollm2-135m-instruct-q4_1 + smollm2-135m-instruct-q4_1, other settings from preset smollm2"
    assert ran in md and "the shipped prompts: English (--lang all for both), category all, 2 repeats" in md
    assert ran.replace(" ", "") in "".join(screen.split())  # wrapped on screen, maybe inside a name


@pytest.mark.model
def test_compare_of_two_real_results(tiny, tmp_path, spectui, capsys):
    _, doc, files = tiny
    faster = json.loads(json.dumps(doc))
    for row in faster["results"]:
        row["tok_per_s"] *= 2
    (tmp_path / "b.json").write_text(json.dumps(faster))
    assert spectui("bench", "compare", str(files["json"]), str(tmp_path / "b.json")) == 0
    out = capsys.readouterr().out
    assert out.count("+100.0%") == len(doc["results"])


@pytest.mark.model
def test_ctrl_c_after_the_first_pass_writes_partial_results(spectui, monkeypatch, tmp_path):
    real = bench_progress.report_pass

    def interrupt(console, configs, index, repeat, done):
        real(console, configs, index, repeat, done)
        raise KeyboardInterrupt  # as if Ctrl+C came right after the first pass

    monkeypatch.setattr(bench_progress, "report_pass", interrupt)
    out = tmp_path / "partial.json"
    assert spectui(*TINY, "--repeat", "2", "--json", str(out), "--markdown", str(tmp_path / "p.md")) == 130
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["interrupted"] == "after pass 1/2"
    # every configuration ran every prompt once: the pass is kept whole
    assert sorted((r["config"], r["prompt"]) for r in doc["runs"]) == sorted(
        (c, p) for c in CONFIGS for p in ("en-qa-01", "en-code-01")
    )
    assert all(r["repeat"] == 0 for r in doc["runs"])
    assert {r["config"] for r in doc["results"]} == set(CONFIGS)
    assert all(not r["complete"] for r in doc["results"])
    assert "(partial)" in (tmp_path / "p.md").read_text(encoding="utf-8")


@pytest.mark.model
def test_passes_interleave_configurations_prompt_by_prompt(tiny):
    _, doc, _ = tiny
    measured = [(r["config"], r["prompt"]) for r in doc["runs"]]
    prompts = list(dict.fromkeys(p for _, p in measured))
    # each prompt is run with every configuration back to back, the order rotating by one
    # from prompt to prompt (and on across passes), so no configuration is always first
    n = len(CONFIGS)
    want = [
        (CONFIGS[(k + j) % n], p)
        for r in range(2)
        for i, p in enumerate(prompts)
        for k in [r * len(prompts) + i]
        for j in range(n)
    ]
    assert measured == want


@pytest.mark.model
def test_sigint_mid_run_keeps_finished_runs(tmp_path):
    """A real Ctrl+C in a subprocess, sent once the first pass's result lines are printed."""
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "spectui", *TINY, "--repeat", "2", "--json", str(out)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
        preexec_fn=interruptible,
    )
    killer = threading.Timer(120, proc.kill)
    killer.start()
    try:
        for line in proc.stderr:
            if line.startswith("pass 1/2: none"):
                proc.send_signal(signal.SIGINT)
                break
        rc = proc.wait()
    finally:
        killer.cancel()
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert rc == 130 and doc["partial"] is True
    assert len(doc["runs"]) >= len(CONFIGS) * 2 and all(r["n_generated"] == N for r in doc["runs"])
    assert {r["config"] for r in doc["runs"]} == set(CONFIGS)


def test_flag_conflicts_are_user_errors(spectui, capsys):
    assert spectui("bench", "--preset", "smollm2", "--spec-type", "ngram-mod", "--sweep-types", "ngram-simple") == 2
    assert "not both" in capsys.readouterr().err
    assert spectui("bench", "--preset", "smollm2", "--sweep-n-max", "3,x") == 2
    assert "'x' is not a whole number" in capsys.readouterr().err
    assert spectui("bench", "--preset", "smollm2", "--spec-type", "none") == 2
    assert "nothing to compare" in capsys.readouterr().err
    with pytest.raises(UserError):
        prompts.select(prompts.shipped(), "ja", "all", None)


def test_the_help_gives_the_bench_s_own_defaults():
    """The bench generates a fixed length, greedy, seed 0: its help says so, not the chat's."""
    shown = run_cli("bench", "--help", env={"COLUMNS": "200"}).stdout
    assert "tokens each run generates, exactly (default 256)" in shown and "-1: no limit" not in shown
    assert "temperature (default 0: greedy" in shown and "sampling seed (default 0" in shown
    assert "-1: no limit" in run_cli("run", "--help", env={"COLUMNS": "200"}).stdout  # the chat's, unchanged


# --------------------------------------------------------------- the screen at 80 columns


def test_the_report_wraps_its_prose_at_word_boundaries_at_80_columns(monkeypatch, capsys):
    """The terminal would cut a long line mid-word; the report wraps it, causes and warnings
    with their text indented under its first word."""
    monkeypatch.setenv("COLUMNS", "80")
    doc = whole_doc()
    bench_command.show(doc)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    causes = [c["detail"] for v in doc["verdicts"] for c in v["causes"]]
    prose = [report.environment_line(doc["environment"]), report.run_line(doc), *doc["warnings"], *causes]
    words = set(out.split())
    for text in prose:
        assert set(text.split()) <= words, text  # no word cut in two
    first = next(i for i, line in enumerate(lines) if line.startswith("warning: temperature"))
    assert re.match(r" {9}\S", lines[first + 1]), lines[first : first + 2]  # under the warning's text
    assert "ko/qa: 1 prompt x 2 runs (+1 warm-up)" in out


def test_the_bench_help_fits_80_columns_paragraph_by_paragraph():
    shown = run_cli("bench", "--help", env={"COLUMNS": "80"}).stdout
    assert max(map(len, shown.splitlines())) <= 80
    assert "\n\nmedians: " in shown and "\n\nCtrl+C stops" in shown  # the epilog's paragraphs kept apart
    assert "-ctkd TYPE, --cache-type-k-draft TYPE" in shown and "one of f32, f16," in shown


def test_one_rejection_is_counted_in_the_singular():
    row = {
        "config": "draft-simple n=3",
        "inspect": {"rejections": 1, "near_tie_share": 1.0, "confident_error_share": 0.0, "median_rejected_p": 0.4},
    }
    assert report.inspect_line(row).startswith("draft-simple n=3: 1 rejection, near-ties 100%,")
    assert verdict._rejections(row)["detail"].startswith("of 1 rejection, 100% near-ties")


@pytest.mark.parametrize("terminal", [False, True])
def test_loading_shows_one_line_redrawn_on_a_terminal_and_its_steps_elsewhere(terminal):
    console = Console(file=io.StringIO(), force_terminal=terminal, width=80)
    with loading_line(console) as status:
        status("loading target x.gguf")
        for tenth in range(1, 11):
            status(f"loading target x.gguf {tenth * 10}%")
        status("creating contexts")
    out = console.file.getvalue()
    if terminal:  # one line, redrawn, then cleared
        assert out.count("\n") == 1 and out.endswith("\x1b[2K")
    else:
        assert out.splitlines() == ["loading target x.gguf", "creating contexts"]
