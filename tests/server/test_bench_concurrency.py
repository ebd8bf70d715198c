"""`spectui bench --server A,B --concurrency 1,2`: the refusals and the statistics without a
model, then the whole measurement against real llama-servers with two slots each."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from spectui.bench import concurrency_report, concurrency_results
from spectui.bench.concurrency import Burst, Measurement, Protocol, Request, check_slots
from spectui.cli.main import main
from spectui.engine import noise
from spectui.errors import UserError
from tests.cli_helpers import run_cli
from tests.conftest import GEMMA, model_file
from tests.helpers.fake_llama import FakeLlamaServer, State, metrics_text
from tests.helpers.processes import spectui
from tests.server.llama_server import Server

N = 24
DOWN = "http://127.0.0.1:9"  # nothing listens: a level that passes its checks then fails to connect


# --- refusals before any request ------------------------------------------------------------


@pytest.mark.parametrize(
    "value,message",
    [
        ("0", "--concurrency: 0 concurrent requests; give 1 to"),
        ("-1", "--concurrency: '-1' is not a whole number"),
        ("2,,4", "--concurrency '2,,4': an empty element"),
        ("1.5", "--concurrency: '1.5' is not a whole number"),
        ("two", "--concurrency: 'two' is not a whole number"),
    ],
)
def test_bad_levels_are_one_line_before_connecting(value, message, capsys):
    assert main(["bench", "--server", DOWN, "--concurrency", value]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_good_levels_go_on_to_the_server(capsys):
    assert main(["bench", "--server", DOWN, "--concurrency", "4,1,2"]) == 2
    assert "cannot reach llama-server at http://127.0.0.1:9" in capsys.readouterr().err


def test_concurrency_needs_a_server(capsys):
    assert main(["bench", "--concurrency", "1,2"]) == 2
    assert "--concurrency needs --server URL[,URL]: spectui's own engine runs one sequence" in capsys.readouterr().err


def test_the_local_protocols_flags_are_refused(capsys, tmp_path):
    assert main(["bench", "--server", DOWN, "--concurrency", "1", "--trace", str(tmp_path / "t")]) == 2
    assert "--trace does not apply to --concurrency" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_an_unwritable_output_is_refused_first(capsys, tmp_path):
    assert main(["bench", "--server", DOWN, "--concurrency", "1", "--json", str(tmp_path / "no/r.json")]) == 2
    assert "--json: cannot write" in capsys.readouterr().err


def test_a_level_above_the_slots_names_np():
    check_slots((1, 2), "http://h:1", 2)
    with pytest.raises(
        UserError, match=r"--concurrency 4 needs 4 slots; http://h:1 has 2: start llama-server with -np 4"
    ):
        check_slots((1, 4), "http://h:1", 2)


# --- statistics and the verdict from recorded numbers ----------------------------------------


def _burst(server: str, level: int, repeat: int, agg: float, drafted: int = 0, accepted: int = 0) -> Burst:
    """`level` requests of N tokens that together make `agg` tok/s."""
    wall = level * N / agg
    reqs = tuple(
        Request(
            f"p{k}", 100.0, 100.0 + wall, N, drafted, accepted, 0.1 * (k + 1), N / wall, (0.01,) * N, "n-predict", ""
        )
        for k in range(level)
    )
    return Burst(server, level, repeat, reqs, None)


def _measured(base: dict[int, list[float]], spec: dict[int, list[float]]) -> list[dict]:
    m = Measurement()
    for level in base:
        for r, (b, s) in enumerate(zip(base[level], spec[level])):
            m.bursts += [_burst("none", level, r, b), _burst("ngram-simple", level, r, s, drafted=12, accepted=9)]
    proto = Protocol(levels=tuple(base), n_predict=N, repeat=len(base[1]))
    return concurrency_results.rows(m, [("none", "http://a"), ("ngram-simple", "http://b")], proto)


def test_rows_hold_aggregate_and_per_request_numbers_with_their_spread():
    rows = _measured({1: [10.0, 10.1, 9.9], 2: [20.0, 20.0, 20.0]}, {1: [12.0, 12.0, 12.0], 2: [15.0, 15.6, 15.2]})
    assert [(r["level"], r["server"]) for r in rows] == [
        (1, "none"),
        (1, "ngram-simple"),
        (2, "none"),
        (2, "ngram-simple"),
    ]
    spec2 = rows[3]
    assert spec2["agg_tok_per_s"] == pytest.approx(15.2)
    assert spec2["agg_tok_per_s_spread"] == pytest.approx(0.6 / 15.2)
    assert spec2["req_tok_per_s_p50"] == pytest.approx(7.6)  # each of 2 requests made half
    assert spec2["gen_tok_per_s"] == pytest.approx(15.2)  # their own rates summed (no prompt time here)
    assert spec2["ttft_p50_s"] == pytest.approx(0.15) and spec2["ttft_p95_s"] == pytest.approx(0.195)
    assert spec2["drafted_per_request"] == 12 and spec2["acceptance_rate"] == pytest.approx(0.75)
    assert rows[0]["drafted_per_request"] == 0 and rows[0]["acceptance_rate"] is None
    assert rows[2]["agg_tok_per_s_spread"] == 0 and len(spec2["repeats"]) == 3 and spec2["complete"] is True


def test_verdict_names_where_speculation_pays_and_the_break_even():
    rows = _measured(
        {1: [10.0, 10.1, 9.9], 2: [20.0, 20.2, 19.8], 4: [36.0, 36.3, 35.7]},
        {1: [12.0, 12.1, 11.9], 2: [15.2, 15.3, 15.1], 4: [24.84, 24.9, 24.8]},
    )
    v = concurrency_results.verdict(rows, 3)
    assert [c["judgement"] for c in v["levels"]] == [noise.PAYS, noise.LOSES, noise.LOSES]
    assert v["break_even"]["concurrency"] == pytest.approx(1 + 0.2 / (1.2 - 0.76))
    assert v["summary"] == (
        "speculation pays up to 1 concurrent request on this server: at 1 pays (+20% of aggregate "
        "tok/s, noise +-3%), at 2 loses (-24%, noise +-3%), at 4 loses (-31%, noise +-3%); "
        "break-even at about 1.5 concurrent requests (1.4 to 1.5 within the noise)"
    )


def test_a_difference_inside_the_spread_is_within_noise():
    rows = _measured({1: [10.0, 11.0, 9.0], 2: [20.0, 20.0, 20.0]}, {1: [10.4, 10.4, 10.4], 2: [16.0, 16.0, 16.0]})
    v = concurrency_results.verdict(rows, 3)
    assert v["levels"][0]["noise"] == pytest.approx(0.2) and v["levels"][0]["judgement"] == "within noise"
    assert v["summary"].startswith(
        "speculation makes no measurable difference at 1 concurrent request: at 1 within noise (+4% of aggregate "
        "tok/s, noise +-20%)"
    )
    assert "break-even at about 1.2 concurrent requests (below 1 to 1.6 within the noise)" in v["summary"]


def test_paying_everywhere_puts_the_break_even_beyond_the_levels():
    rows = _measured({1: [10.0], 2: [18.0]}, {1: [14.0], 2: [20.0]})
    v = concurrency_results.verdict(rows, 1)
    assert v["break_even"]["above_measured"] and v["break_even"]["concurrency"] is None
    assert v["summary"].startswith("speculation pays at every concurrency measured, up to 2 concurrent requests")
    assert "break-even above 2 concurrent requests" in v["summary"] and "one pass: the noise is unknown" in v["summary"]


def test_the_servers_counters_add_up_over_the_passes():
    from dataclasses import replace

    from spectui.engine.server_metrics import SpecCounters

    def counted(b: Burst, drafted: int, accepted: int, per_pos: tuple[int, ...], busy: float) -> Burst:
        c = SpecCounters(drafted, accepted, drafted // 3, per_pos, busy, 0, 0, decodes=10)
        return replace(b, counters=c.as_dict())

    m = Measurement(
        bursts=[
            counted(_burst("draft-simple", 2, 0, 10.0), 30, 20, (9, 7, 4), 1.8),
            counted(_burst("draft-simple", 2, 1, 10.0), 36, 24, (10, 8, 6, 0), 2.0),
            counted(_burst("draft-simple", 2, 2, 10.0), 33, 21, (9, 7, 5), 1.9),
        ]
    )
    rows = concurrency_results.rows(m, [("draft-simple", "http://b")], Protocol(levels=(2,), n_predict=N, repeat=3))
    c = rows[0]["server_counters"]
    assert (c["drafted"], c["accepted"], c["drafts"]) == (99, 65, 33)
    assert c["accepted_per_pos"] == [28, 22, 15, 0] and c["per_pos_rates"][0] == pytest.approx(28 / 33)
    assert c["acceptance"] == pytest.approx(65 / 99)
    assert c["busy_slots_per_decode"] == pytest.approx(1.9) and c["decodes"] == 30  # weighted by decodes
    assert concurrency_report.csv_rows({"results": rows})[0]["server_drafted"] == 99


def test_losing_from_the_first_level_puts_the_break_even_below_it():
    rows = _measured({1: [10.0, 10.0], 2: [20.0, 20.0]}, {1: [8.0, 8.0], 2: [12.0, 12.0]})
    v = concurrency_results.verdict(rows, 2)
    assert v["break_even"]["below_measured"] and v["break_even"]["concurrency"] == 0
    assert v["summary"] == (
        "speculation does not pay on this server, even at 1 concurrent request: at 1 loses (-20% of "
        "aggregate tok/s, noise +-3%), at 2 loses (-40%, noise +-3%); break-even below 1 concurrent "
        "request, the lowest level measured"
    )


def test_a_server_that_drafted_nothing_gets_no_verdict_beyond_saying_so():
    rows = _measured({1: [10.0, 10.0], 2: [20.0, 20.0]}, {1: [6.0, 6.0], 2: [24.0, 24.0]})
    for row in rows:
        row["drafted_per_request"], row["accepted_per_request"] = 0, 0
    v = concurrency_results.verdict(rows, 2)
    assert v["summary"].startswith("ngram-simple drafted nothing at any level, it ran as plain decoding")
    assert "pay" not in v["summary"] and "break-even" not in v["summary"] and v["levels"] == []


def test_server_counters_that_go_down_are_named_and_left_out(tmp_path, dirs):
    """/metrics going backwards between two scrapes: no burst of that server shows counters."""
    scrapes = iter(range(1000, 0, -1))

    def backwards() -> str:
        n = next(scrapes)
        return metrics_text(2 * n, n, n, (n,))

    base = FakeLlamaServer(State())
    spec = FakeLlamaServer(State(spec_types="none,ngram-simple", metrics=backwards))
    try:
        out = tmp_path / "r.json"
        args = ["bench", "--server", f"{base.url},{spec.url}", "--concurrency", "1", "--repeat", "1", "-n", "4"]
        r = run_cli(*args, "--lang", "en", "--category", "code", "--limit", "1", "--json", str(out))
    finally:
        base.stop()
        spec.stop()
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    (burst,) = [b for b in doc["bursts"] if b["server"] == "ngram-simple"]
    assert burst["server_counters"] is None and "went down" in burst["server_counters_note"]
    assert all(row["server_counters"] is None for row in doc["results"])
    assert any("went down" in w for w in doc["warnings"]) and "cannot be true" in " ".join(r.stdout.split())


def test_without_a_baseline_there_is_no_verdict():
    m = Measurement(bursts=[_burst("ngram-simple", 1, 0, 10.0)])
    rows = concurrency_results.rows(m, [("ngram-simple", "http://b")], Protocol(levels=(1,), n_predict=N, repeat=1))
    assert concurrency_results.verdict(rows, 1)["summary"].startswith("cannot tell: give two servers")


def test_the_files_carry_every_level(tmp_path):
    m = Measurement()
    for level in (1, 2):
        m.bursts += [_burst("none", level, 0, 10.0 * level), _burst("ngram-simple", level, 0, 9.0 * level, 6, 3)]
    m.partial, m.failed, m.interrupted = True, True, "ngram-simple at concurrency 4, pass 1/1: lost"
    proto = Protocol(levels=(1, 2, 4), n_predict=N, repeat=1)
    servers = [
        {"label": "none", "url": "http://a", "model": "m.gguf", "total_slots": 4, "metrics": False},
        {"label": "ngram-simple", "url": "http://b", "model": "m.gguf", "total_slots": 4, "metrics": False},
    ]
    env = {"cpu": "cpu", "spectui": "0", "os": "os", "load_average": 0.1, "models": {"target": {"file": "m.gguf"}}}
    env["server"] = {"url": "http://a", "build_info": "b1", "model_ftype": "Q8", "spec_types": ["none"], "n_ctx": 1}
    record = {"temp": 0.0, "prompts": "shipped"}
    doc = concurrency_results.build(m, servers, proto, record, [], env, {"started": "t", "duration_s": 1.0})
    assert doc["schema"] == "spectui-bench-concurrency/1" and doc["partial"] and doc["failed"]
    assert [(r["level"], r["server"]) for r in doc["results"]] == [
        (1, "none"),
        (1, "ngram-simple"),
        (2, "none"),
        (2, "ngram-simple"),
    ]
    md = concurrency_report.markdown(doc)
    assert "**Partial result**: failed (ngram-simple at concurrency 4" in md and md.count("| 2 | ") == 2
    rows = concurrency_report.csv_rows(doc)
    assert [r["level"] for r in rows] == [1, 1, 2, 2] and "agg_tok_per_s_spread" in rows[0]
    path = tmp_path / "r.csv"
    from spectui.bench.report import write

    write(doc, None, str(path), None, concurrency_report.markdown, concurrency_report.csv_rows)
    assert len(list(csv.DictReader(path.open()))) == 4
    json.dumps(doc)  # every number is JSON


# --- against real llama-servers with two slots ------------------------------------------------

TWO_SLOTS = ("-np", "2")  # after the helper's own -np 1: the last given wins


@pytest.fixture(scope="module")
def plain(server_bin, smol_path):
    server = Server(server_bin, smol_path, *TWO_SLOTS)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def drafting(server_bin, smol_path):
    server = Server(server_bin, smol_path, *TWO_SLOTS, "-md", str(smol_path), "--spec-type", "draft-simple")
    yield server
    server.stop()


def bench(*args: str) -> list[str]:
    """The command line of a short bench: two English code prompts, -n N, one pass."""
    return ["bench", *args, "--lang", "en", "--category", "code", "--limit", "2", "--repeat", "1", "-n", str(N)]


@pytest.mark.model
def test_two_servers_at_two_levels(plain, drafting, tmp_path):
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    r = spectui(
        *bench("--server", f"{drafting.url},{plain.url}", "--concurrency", "1,2", "--json", str(out)),
        "--markdown",
        str(md),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "spectui-bench-concurrency/1" and not doc["partial"]
    assert [s["label"] for s in doc["servers"]] == ["none", "draft-simple"]  # the baseline first
    assert [s["total_slots"] for s in doc["servers"]] == [2, 2]
    assert [(row["level"], row["server"]) for row in doc["results"]] == [
        (1, "none"),
        (1, "draft-simple"),
        (2, "none"),
        (2, "draft-simple"),
    ]
    for b in doc["bursts"]:
        assert len(b["requests"]) == b["level"] and all(q["n_generated"] == N for q in b["requests"])
        if b["level"] == 2:  # the two requests ran at once, with different prompts
            first, second = b["requests"]
            assert first["start_s"] < second["end_s"] and second["start_s"] < first["end_s"]
            assert first["prompt"] != second["prompt"]
        # the server's own counters over the burst hold exactly its requests' drafts
        assert b["server_counters"]["drafted"] == sum(q["n_drafted"] for q in b["requests"])
        assert b["server_counters"]["accepted"] == sum(q["n_accepted"] for q in b["requests"])
    spec = [row for row in doc["results"] if row["server"] == "draft-simple"]
    assert all(row["drafted_per_request"] > 0 and row["agg_tok_per_s"] > 0 for row in spec)
    assert all(row["drafted_per_request"] == 0 for row in doc["results"] if row["server"] == "none")
    assert [c["level"] for c in doc["verdict"]["levels"]] == [1, 2]
    assert "break-even" in doc["verdict"]["summary"] and "break-even" in r.stdout
    lines = [line for line in r.stderr.splitlines() if "] pass 1/1, concurrency" in line]
    assert len(lines) == 4 and "concurrency 2, draft-simple:" in lines[-1] + lines[-2]
    assert "**Verdict**: speculation" in md.read_text()


@pytest.mark.model
def test_a_level_above_the_slots_is_refused_naming_np(plain, capsys):
    assert main(bench("--server", plain.url, "--concurrency", "1,4")) == 2
    err = capsys.readouterr().err
    assert f"--concurrency 4 needs 4 slots; {plain.url} has 2: start llama-server with -np 4" in err


@pytest.mark.model
def test_servers_with_different_models_are_refused(server_bin, plain, capsys):
    gemma = Server(server_bin, model_file(GEMMA), *TWO_SLOTS)
    try:
        assert main(bench("--server", f"{plain.url},{gemma.url}", "--concurrency", "1")) == 2
        assert "the servers run different models" in capsys.readouterr().err
    finally:
        gemma.stop()


@pytest.mark.model
def test_a_server_killed_mid_run_keeps_the_levels_measured(server_bin, smol_path, plain, tmp_path):
    victim = Server(server_bin, smol_path, *TWO_SLOTS, "--spec-type", "ngram-simple")
    out = tmp_path / "r.json"
    args = bench("--server", f"{plain.url},{victim.url}", "--concurrency", "1,2", "--json", str(out))
    args[args.index("--repeat") + 1] = "3"
    proc = subprocess.Popen(
        [sys.executable, "-m", "spectui", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        seen = 0
        assert proc.stderr is not None
        for line in proc.stderr:  # both servers measured at 1: the victim dies during level 2
            seen += "] pass 1/3, concurrency 1," in line
            if seen == 2:
                victim.stop()
                break
        rest = proc.communicate(timeout=120)[1]
    finally:
        victim.stop()
        proc.kill()
    assert proc.returncode == 1, rest
    assert "failed: ngram-simple" in rest and "at concurrency 2, pass 1/3" in rest and "(partial)" in rest
    doc = json.loads(out.read_text())
    assert doc["partial"] and doc["failed"] and "at concurrency 2" in doc["interrupted"]
    levels = {(row["level"], row["server"]) for row in doc["results"]}
    assert {(1, "none"), (1, "ngram-simple")} <= levels and (2, "ngram-simple") not in levels
    assert all(not row["complete"] for row in doc["results"])
