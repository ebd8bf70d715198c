"""One inspected run, every view of it: `spectui run --inspect --json`, its trace and the
trace's HTML export show the same verdicts (the HTML's tooltips found with html.parser);
version-1 traces still read, replay and export; a trace's bad verdict is refused by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spectui.chat.inspector import rejection_kinds
from spectui.cli.export import export
from spectui.cli.main import main
from spectui.engine import verdicts
from spectui.engine.events import Round
from spectui.errors import UserError
from spectui.trace import format as trace_format
from spectui.trace.timeline import steps
from tests.helpers.html_spans import Spans
from tests.helpers.processes import spectui
from tests.helpers.prompts import PROMPT

V1 = Path(__file__).parents[1] / "data" / "smollm2_turn.jsonl"


@pytest.fixture(scope="module")
def inspected(tmp_path_factory):
    """SmolLM2 drafting for itself at temperature 0.8, rejection sampling: its --json, trace and HTML."""
    folder = tmp_path_factory.mktemp("inspect")
    trace, page = folder / "run.jsonl", folder / "run.html"
    r = spectui(
        "run", "--preset", "smollm2", "--temp", "0.8", "--seed", "5", "-n", "64", "--spec-verify", "rejection",
        "--inspect", "--json", "--trace", str(trace), PROMPT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert main(["replay", str(trace), "--export", str(page)]) == 0
    return json.loads(r.stdout), trace_format.read(trace), page.read_text(encoding="utf-8")


@pytest.mark.model
def test_run_json_the_trace_and_the_html_show_the_same_verdicts(inspected):
    data, trace, page = inspected
    [turn] = trace.turns
    rounds = [e for e in turn.events if isinstance(e, Round) and e.drafted]
    assert [[verdicts.Verdict(**{**v, "top": tuple(map(tuple, v["top"])), "top_text": tuple(v["top_text"])})
             for v in r["verdicts"]] for r in data["rounds"]] == [list(r.verdicts) for r in rounds]  # fmt: skip
    assert data["inspect"] == verdicts.summary_dict(rounds)
    n, ties, errors, median = verdicts.summarize(rounds)
    assert n > 0 and data["inspect"]["rejections"] == n
    tips = [s["title"] for s in spans_of(page) if "title" in s]
    for r in rounds:
        for v in r.verdicts:
            emitted = r.tokens[r.n_accepted].piece if not v.accepted and len(r.tokens) > r.n_accepted else None
            assert any(all(line in tip for line in verdicts.facts(v, r.verify, emitted)) for tip in tips), v
    assert f"inspected: {rejection_kinds(n, ties, errors, brief=True)}, median p {median:.3f}" in page


def spans_of(page: str) -> list[dict]:
    parser = Spans()
    parser.feed(page)
    return parser.spans


@pytest.mark.model
def test_a_rejection_s_tooltip_gives_p_q_and_the_target_s_top_3(inspected):
    _, trace, page = inspected
    rejected = [(e, v) for e in trace.turns[0].events if isinstance(e, Round) for v in e.verdicts if not v.accepted]
    r, v = rejected[0]
    assert v.q is not None and len(v.top) == 3
    spans = [s for s in spans_of(page) if s.get("class") == "rejected"]
    tip = next(
        s["title"] for s in spans if f"first rejected token {v.text!r}" in s["title"] and f"p {v.p:.3f}" in s["title"]
    )
    assert f"q {v.q:.3f}" in tip
    for text, (_, p) in zip(v.top_text, v.top):
        assert f"{text!r} {p:.3f}" in tip
    assert "<script" not in page and "http" not in page.split("<body>")[0]  # self-contained


def test_a_version_1_trace_still_reads_replays_and_exports(tmp_path):
    assert json.loads(V1.read_text(encoding="utf-8").splitlines()[0])["version"] == 1
    trace = trace_format.read(V1)
    rounds = [e for t in trace.turns for e in t.events if isinstance(e, Round)]
    assert rounds and all(r.verdicts == () for r in rounds)
    assert len(steps(trace)) >= len(rounds)
    out = tmp_path / "v1.html"
    assert main(["replay", str(V1), "--export", str(out)]) == 0
    spans = spans_of(out.read_text(encoding="utf-8"))
    assert sum(len(r.tokens) for r in rounds) <= len([s for s in spans if s.get("class") in ("draft", "target")])
    assert all(s["title"] in ("accepted (draft model) (draft-simple)", "target / bonus") or "rejected" in s["title"]
               or "instead" in s["title"] for s in spans if "title" in s)  # fmt: skip


def _with_verdict(tmp_path, verify: str | None = None, **change) -> tuple[Path, int]:
    """The version-1 fixture, its first drafting round given a verdict (with `change`), and
    `verify` as its rule where given."""
    lines = V1.read_text(encoding="utf-8").splitlines()
    n = next(i for i, ln in enumerate(lines) if '"kind": "Round"' in ln and json.loads(ln)["drafted"])
    record = json.loads(lines[n])
    record["verify"] = verify or record["verify"]
    verdict = {"position": 0, "token": record["drafted"][0], "p": 0.5, "q": 0.9, "acceptance": None,
               "draw": None, "accepted": record["n_accepted"] > 0, "top": [], "emitted": None}  # fmt: skip
    record["verdicts"] = [{**verdict, **change}]
    lines[n] = json.dumps(record)
    path = tmp_path / "v2.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, n + 1


def test_a_round_s_verdict_reads_back(tmp_path):
    path, _ = _with_verdict(tmp_path)
    [r] = [e for e in trace_format.read(path).turns[0].events if isinstance(e, Round) and e.verdicts]
    assert r.verdicts[0].p == 0.5 and r.verdicts[0].q == 0.9


def test_a_version_2_match_verdict_shows_the_target_s_sample_not_its_draw(tmp_path):
    """Version 2 recorded p as a sample-and-match verdict's acceptance, and the draw the target
    sampled with: the tooltip says the target sampled its own token and compares no draw."""
    path, _ = _with_verdict(tmp_path, verify="match", acceptance=0.5, draw=0.175)
    out = tmp_path / "v2.html"
    assert main(["replay", str(path), "--export", str(out)]) == 0
    tips = [s["title"] for s in spans_of(out.read_text(encoding="utf-8")) if "p 0.500 · q 0.900" in s.get("title", "")]
    assert tips and all("accepted: the target sampled its own token: the same one" in tip for tip in tips)
    assert not any("draw" in tip or "acceptance" in tip for tip in tips)


@pytest.mark.parametrize(
    "change,message",
    [
        ({"token": -1}, "did not draft it"),
        ({"p": 1.5}, "outside 0..1"),
        ({"p": "high"}, "wrong type of verdicts"),
        ({"top": [[1, 0.5, 3]]}, "wrong type of verdicts"),
        ({"bogus": 1}, "TypeError"),
    ],
)
def test_a_bad_verdict_is_refused_with_its_line(tmp_path, change, message):
    path, line = _with_verdict(tmp_path, **change)
    with pytest.raises(UserError, match=rf"line {line}: a malformed Round record .*{message}"):
        trace_format.read(path)


@pytest.mark.model
def test_bench_inspect_gives_each_configuration_its_near_ties_and_median_rejected_p(tmp_path, monkeypatch):
    """A tiny bench at temperature 0.8: the JSON row, the CSV and the report's lines and cause agree."""
    from spectui.bench import report
    from spectui.cli import main as cli
    from tests.helpers.bench import TINY, cache_tiny_curve

    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    cache_tiny_curve()  # the verdict's citation without timing decodes

    files = {k: tmp_path / f"r.{k}" for k in ("json", "csv", "md")}
    args = ["--temp", "0.8", "--repeat", "1", "--inspect", "--json", str(files["json"]), "--csv", str(files["csv"])]
    assert cli.main(TINY + args + ["--markdown", str(files["md"])]) == 0
    doc = json.loads(files["json"].read_text(encoding="utf-8"))
    rows = [r for r in doc["results"] if r["n_drafted"]]
    assert rows and all(r["inspect"] is not None for r in rows)
    assert all(r["inspect"] is None for r in doc["results"] if r["config"] == "none")
    rejected = [r for r in rows if r["inspect"]["rejections"]]
    assert rejected
    for r in rejected:
        ins = r["inspect"]
        assert ins["near_tie_share"] == ins["near_ties"] / ins["rejections"] and 0 <= ins["median_rejected_p"] <= 1
    md = files["md"].read_text(encoding="utf-8")
    for r in rows:
        assert report.inspect_line(r) in md
    causes = [c for v in doc["verdicts"] for c in v["causes"] if c["cause"] == "confident draft errors"]
    assert causes and all("near-ties" in c["detail"] or c["flagged"] is None for c in causes)
    assert "inspect_median_rejected_p" in files["csv"].read_text(encoding="utf-8").splitlines()[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.model
def test_any_damage_to_a_verdict_is_refused_cleanly_or_exports(inspected, tmp_path, data):
    """Whatever a verdict's field becomes, reading gives a trace or one line, and a trace that
    reads exports to HTML without a traceback."""
    _, trace, _ = inspected
    lines = trace_format.Trace(trace.header, trace.turns).text().splitlines()
    judged = [i for i, ln in enumerate(lines) if '"verdicts"' in ln]
    n = data.draw(st.sampled_from(judged))
    d = json.loads(lines[n])
    v = data.draw(st.sampled_from(d["verdicts"]))
    key = data.draw(st.sampled_from(sorted(v)))
    v[key] = data.draw(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-2, 10**6),
            st.floats(allow_nan=True),
            st.text(max_size=3),
            st.lists(st.one_of(st.integers(-1, 3), st.lists(st.floats(0, 1), max_size=3)), max_size=4),
        )
    )
    lines[n] = json.dumps(d)
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        damaged = trace_format.read(path)
    except UserError as e:
        assert "\n" not in str(e)
        return
    export(damaged, tmp_path / "fuzz.html", show_rejected=True)
