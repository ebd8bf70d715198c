"""`spectui bench` writing to a log (`> bench.log 2>&1`, nohup): whole lines, grep-able. Its
progress is a line per finished run and at least one a minute, with the time elapsed and left,
no bar and no carriage return; its report and pass lines are not wrapped at 80 columns."""

from __future__ import annotations

import io
import re
from pathlib import Path

from spectui.bench.protocol import Config
from spectui.cli import bench as bench_command
from spectui.cli import bench_progress, streams
from spectui.spec_config import SpecConfig
from spectui.trace import format as trace_format
from tests.helpers.bench import QA_A, fake_run, whole_doc

TRACE = Path(__file__).parents[1] / "data" / "smollm2_turn.jsonl"
LONG = "ngram-simple,ngram-map-k,ngram-map-k4v,ngram-mod,ngram-cache,draft-simple n=8 | en-code-02"


def bench_of_two_runs(console, monkeypatch) -> None:
    """Two runs of the recorded turn (15 events, 48 tokens), an event every 10 s: 140 s each."""
    events = trace_format.read(TRACE).turns[0].events
    clock = [0.0]
    monkeypatch.setattr(bench_progress.time, "monotonic", lambda: clock[0])
    with bench_progress.shown(console, 2 * 48, 2) as progress:
        for what in ("draft-simple n=3 | en-qa-01", LONG):
            for ev in events:
                clock[0] += 10.0
                progress.on_event(what, ev, 48)


def test_in_a_log_each_run_is_one_whole_line_and_a_long_one_says_something_each_minute(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # a width given there would wrap the long line
    out = io.StringIO()
    bench_of_two_runs(streams.console(file=out), monkeypatch)
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text and "━" not in text
    lines = text.splitlines()
    assert len(lines) == 6, lines  # per run: at 1:00 and 2:00 of it, then its end
    minute = r"\[0/2\] draft-simple n=3 \| en-qa-01: \d+/48 tokens so far; 0:0[12]:00 elapsed, about 0:\d\d:\d\d left"
    assert all(re.fullmatch(minute, line) for line in lines[0:2]), lines
    assert lines[2] == "[1/2] draft-simple n=3 | en-qa-01: done in 140 s; 0:02:30 elapsed, about 0:02:30 left"
    assert lines[5] == f"[2/2] {LONG}: done in 140 s; 0:05:00 elapsed, about 0:00:00 left"  # past 80 columns, whole


def test_on_a_terminal_the_bench_keeps_its_bar(monkeypatch):
    out = io.StringIO()
    bench_of_two_runs(streams.console(file=out, force_terminal=True, width=100), monkeypatch)
    assert "━" in out.getvalue() and "done in" not in out.getvalue()


def test_in_a_log_a_pass_line_keeps_each_group_with_its_figure(monkeypatch):
    """The trial's log had "ko/qa" at the end of one line and "12.6 tok/s" on the next."""
    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()
    cfg = Config(LONG.split(" | ")[0], SpecConfig(types=("ngram-simple", "draft-simple"), draft_n_max=8))
    done = {cfg.label: [fake_run(cfg.label, QA_A, 0, 12.6)]}
    bench_progress.report_pass(streams.console(file=out), [cfg], 0, 3, done)
    assert out.getvalue() == f"pass 1/3: {cfg.label}: ko/qa 12.6 tok/s\n"


def test_in_a_log_the_report_is_not_wrapped(monkeypatch, capsys):
    """Each verdict's cause on one line, so grep finds it whole; a terminal still wraps at its
    width (and $COLUMNS still says a width: tests/models/test_bench.py)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    doc = whole_doc()
    bench_command.show(doc)
    lines = capsys.readouterr().out.splitlines()
    causes = [c["detail"] for v in doc["verdicts"] for c in v["causes"]]
    assert causes and max(map(len, causes)) > 80
    for cause in causes:
        assert any(cause in line for line in lines), cause
    assert any(w in line and line.startswith("warning: ") for w in doc["warnings"] for line in lines)


def test_each_runs_events_say_its_repeat_so_a_warm_up_is_named_in_the_log():
    """The log's first runs read as the measured ones ("[1/12] none | en-qa-01" twice): each
    event carries its run's repeat, -1 for a warm-up."""
    from spectui.bench import protocol
    from spectui.engine.events import TurnEnd
    from tests.fake_session import FakeSession

    seen = []
    configs = [Config("none", SpecConfig()), Config("ngram-simple", SpecConfig(types=("ngram-simple",)))]
    proto = protocol.Protocol(n_predict=8, repeat=2, warmup=1)
    m = protocol.measure(
        FakeSession(),
        configs,
        [QA_A],
        proto,
        lambda c, p, r, e: seen.append((c.label, r)) if isinstance(e, TurnEnd) else None,
    )
    assert not m.partial and seen[:2] == [("none", -1), ("ngram-simple", -1)]
    assert sorted(seen[2:]) == [("ngram-simple", 0), ("ngram-simple", 1), ("none", 0), ("none", 1)]
