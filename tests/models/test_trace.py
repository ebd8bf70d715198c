"""Traces: recorded by `spectui run --trace` on the real SmolLM2 preset, read back,
replayed on the timeline and exported; every bad trace refused with one line naming where."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spectui.cli import run as run_command
from spectui.cli.export import export
from spectui.cli.main import main
from spectui.cli.render import legend
from spectui.cli.replay import with_text
from spectui.config.embedded import CATALOG
from spectui.engine import overlay
from spectui.engine.events import Round
from spectui.engine.stats import summarize
from spectui.engine.verdicts import Verdict
from spectui.errors import UserError
from spectui.llama import model as model_module
from spectui.trace import format as trace_format
from spectui.trace.format import ConfigChange, Trace
from spectui.trace.timeline import INTER_TURN_S, Playhead, steps
from tests.fake_session import NAME, load_trace
from tests.helpers.processes import spectui
from tests.helpers.prompts import PROMPT

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real run with rejections (n-gram drafts at a high temperature): its trace and --json."""
    path = tmp_path_factory.mktemp("trace") / "run.jsonl"
    r = spectui(
        "run",
        "--preset",
        "smollm2",
        "--temp",
        "1.2",
        "--seed",
        "3",
        "-n",
        "48",
        "--spec-type",
        "ngram-cache",
        "--spec-verify",
        "rejection",
        "--json",
        "--trace",
        str(path),
        PROMPT,
    )
    assert r.returncode == 0, r.stderr
    return path, json.loads(r.stdout)


def rejected_texts(trace: Trace) -> list[str]:
    return [e.rejected_text for t in trace.turns for e in t.events if isinstance(e, Round) and e.rejected_text.strip()]


# --- recording and the format ---------------------------------------------------------


@pytest.mark.model
def test_run_trace_holds_what_run_printed_with_its_machine_and_settings(recorded):
    path, data = recorded
    trace = trace_format.read(path)
    assert trace.header["format"] == "spectui-trace" and trace.header["version"] == trace_format.VERSION
    env = trace.header["environment"]
    assert env["models"]["target"]["file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert env["models"]["target"]["sha256"] and env["llama_cpp_python"] and env["openmp"] and env["threads"]
    assert trace.header["settings"]["spec_type"] == "ngram-cache" and trace.header["settings"]["temp"] == 1.2
    [turn] = trace.turns
    assert turn.prompt == PROMPT and "RSS" in turn.memory
    assert turn.end.text == data["text"] and list(turn.end.tokens) == data["tokens"]
    # the panel's and the summary's figures come from the events: replayed, they are the same
    assert summarize(turn.events).as_dict() == data["stats"]
    assert rejected_texts(trace), "the recorded run should include rejected drafts"


@pytest.mark.model
def test_format_round_trip_is_exact(recorded):
    path, _ = recorded
    assert trace_format.read(path).text() == path.read_text(encoding="utf-8")
    shipped = load_trace()  # the UI tests' recording is a trace too
    assert shipped.text() == Path("tests/data/smollm2_turn.jsonl").read_text(encoding="utf-8")


def test_auto_round_fields_are_written_only_when_set_and_old_lines_read_with_defaults(tmp_path):
    recording = Path("tests/data/smollm2_turn.jsonl")
    assert '"probe"' not in recording.read_text(encoding="utf-8")  # written before the fields existed
    trace = load_trace(recording)
    events = trace.turns[0].events
    i, j = [k for k, e in enumerate(events) if isinstance(e, Round)][:2]
    assert (events[i].probe, events[i].t_sync) == (False, 0.0)
    events[j] = replace(events[j], probe=True, t_sync=0.25)
    trace.write(tmp_path / "t.jsonl")
    rounds = [d for d in map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines()) if d["kind"] == "Round"]
    assert "probe" not in rounds[0] and "t_sync" not in rounds[0]  # a plain round's line is unchanged
    assert (rounds[1]["probe"], rounds[1]["t_sync"]) == (True, 0.25)
    assert trace_format.read(tmp_path / "t.jsonl").turns[0].events == events
    with pytest.raises(TypeError, match="probe"):
        trace_format.event_from_record({**rounds[1], "probe": "yes"})


def test_live_configuration_changes_are_recorded_in_time_order(tmp_path):
    trace = load_trace()
    turn = trace.turns[0]
    rounds = [e for e in turn.events if isinstance(e, Round)]
    change = ConfigChange(rounds[2].t - 1e-6, {**turn.events[0].config, "draft_n_max": 5})
    turn.changes = [change]
    trace.write(tmp_path / "t.jsonl")
    kinds = [json.loads(line)["kind"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    third = [i for i, k in enumerate(kinds) if k == "Round"][2]
    assert kinds[third - 1] == "config"
    assert trace_format.read(tmp_path / "t.jsonl").turns[0].changes == [change]


# --- timeline: speed and stepping -------------------------------------------------------


def two_turns() -> Trace:
    trace = load_trace()
    trace.turns.append(replace(trace.turns[0], prompt="again"))
    return trace


def test_steps_are_one_per_round_at_the_recorded_times():
    trace = two_turns()
    events = trace.turns[0].events
    rounds = [e for e in events if isinstance(e, Round)]
    timeline = steps(trace)
    assert len(timeline) == 2 * (1 + len(rounds))
    first = timeline[: 1 + len(rounds)]
    assert [s.at for s in first[1:]] == pytest.approx([r.t - events[0].t for r in rounds])
    assert first[-1].n_events == len(events)  # the last round's step ends the turn
    second_start = timeline[1 + len(rounds)]
    assert second_start.turn == 1 and second_start.at == pytest.approx(events[-1].t - events[0].t + INTER_TURN_S)


def test_playhead_plays_at_the_chosen_speed_and_steps_pause_it():
    timeline = steps(load_trace())
    head = Playhead(timeline, speed=2.0)
    target = timeline[5].at
    head.tick(target / 2 - 1e-4)  # half the recorded time at x2: just short of step 5
    assert head.pos == 4 and head.playing
    head.tick(2e-4)
    assert head.pos == 5
    head.seek(head.pos + 1)
    assert head.pos == 6 and not head.playing
    assert not head.tick(100) and head.pos == 6  # paused: time does not move it
    head.seek(-3)
    assert head.pos == 0
    head.toggle()
    head.tick(1e6)
    assert head.at_end and not head.playing
    head.toggle()  # from the end: starts again
    assert head.pos == 0 and head.playing
    assert [head.change_speed(1) for _ in range(4)] == [4.0, 10.0, 10.0, 10.0]
    assert [head.change_speed(-1) for _ in range(6)] == [4.0, 2.0, 1.0, 0.5, 0.25, 0.25]


@pytest.mark.parametrize(
    "speed, says", [("0.1", "between 0.25 and 10"), ("11", "between 0.25 and 10"), ("nan", "a finite number")]
)
@pytest.mark.model
def test_speed_out_of_range_is_refused(recorded, speed, says, capsys):
    assert main(["replay", str(recorded[0]), "--speed", speed]) == 2
    assert f"--speed must be {says}" in capsys.readouterr().err


# --- exports ------------------------------------------------------------------------------


@pytest.mark.model
def test_svg_and_html_exports_show_the_overlay_and_the_legend(recorded, tmp_path, capsys):
    path, data = recorded
    trace = trace_format.read(path)
    rejected = rejected_texts(trace)
    for suffix in (".svg", ".html"):
        out = tmp_path / f"a{suffix}"
        assert main(["replay", str(path), "--export", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        if suffix == ".svg":
            ET.fromstring(text)  # well-formed: browsers open it
            flat = re.sub(r"<[^>]+>", "", text).replace("&#160;", " ")
        else:
            parser = HTMLParser()
            parser.feed(text)
            flat = html.unescape(re.sub(r"<[^>]+>", "", text))
        for word in re.findall(r"\w{4,}", data["text"])[:10]:
            assert word in flat
        assert "rejected draft" in flat and "accepted (n-gram)" in flat  # the legend
        assert any(r.strip()[:4] in flat for r in rejected)
    out = tmp_path / "clean.html"
    assert main(["replay", str(path), "--export", str(out), "--no-rejected"]) == 0
    clean = html.unescape(re.sub(r"<[^>]+>", "", out.read_text(encoding="utf-8")))
    assert "text-decoration: line-through" not in out.read_text(encoding="utf-8")
    assert re.sub(r"\s", "", data["text"]) in re.sub(r"\s", "", clean)


@pytest.mark.model
def test_cast_is_asciinema_v2_and_streams_at_the_recorded_times(recorded, tmp_path):
    path, data = recorded
    out = tmp_path / "a.cast"
    assert main(["replay", str(path), "--export", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    assert head["version"] == 2 and head["width"] > 0 and head["height"] > 0
    frames = [json.loads(line) for line in lines[1:]]
    assert all(len(f) == 3 and f[1] == "o" and isinstance(f[2], str) for f in frames)
    times = [f[0] for f in frames]
    assert times == sorted(times)
    trace = trace_format.read(path)
    assert times[-1] == pytest.approx(steps(trace)[-1].at, abs=1e-5)
    assert all("\n" not in f[2].replace("\r\n", "") for f in frames)  # a terminal needs CR LF
    shown = ANSI.sub("", "".join(f[2] for f in frames))
    assert PROMPT.splitlines()[0] in shown
    assert "\x1b[" in "".join(f[2] for f in frames)  # coloured


@pytest.mark.parametrize("suffix", [".svg", ".html", ".cast"])
def test_an_export_s_title_names_the_model_as_the_chat_does(tmp_path, suffix):
    """The catalog title, as the chat header and the replay show it; never the GGUF's
    general.name, which the recording holds ("Smollm2 135M 8k Lc100K Mix1 Ep2")."""
    text = export(load_trace(), tmp_path / f"a{suffix}", show_rejected=True).read_text(encoding="utf-8")
    title = CATALOG["smollm2-135m-instruct-q4_1"].title
    assert f"spectui · {title}" in html.unescape(text).replace("\xa0", " ") or f"spectui \\u00b7 {title}" in text
    assert NAME not in text and NAME.replace(" ", "&#160;") not in text


def test_the_run_legend_styles_each_kind_as_its_tokens_print():
    """The target's tokens print plain: its legend entry too, not in reverse video."""
    shown = legend()
    for kind, label in overlay.LEGEND.items():
        start = shown.plain.index(label)
        styles = [str(s.style) for s in shown.spans if s.start <= start < s.end]
        assert styles == [overlay.STYLES[kind]] * bool(overlay.STYLES[kind]), kind


def test_one_rejection_is_counted_in_the_singular_in_run_and_the_html(tmp_path):
    trace = load_trace()
    [turn] = trace.turns
    r = next(e for e in turn.events if isinstance(e, Round) and e.drafted)
    top = ((5, 0.41), (6, 0.40), (7, 0.1))
    tie = Verdict(r.n_accepted, r.drafted[-1], p=0.4, q=0.5, acceptance=None, draw=None, accepted=False, top=top)
    events = [replace(e, verdicts=(tie,)) if e is r else e for e in turn.events]
    assert run_command.inspect_line(events).startswith("inspect: 1 rejection: 1 near-tie (")
    page = export(Trace(trace.header, [replace(turn, events=events)]), tmp_path / "p.html", True)
    assert "inspected: 1 rejection: 1 near-tie, 0 confident draft errors, median p 0.400" in page.read_text()


@pytest.mark.model
def test_export_refuses_an_unknown_format_before_reading(recorded, tmp_path, capsys):
    assert main(["replay", str(recorded[0]), "--export", str(tmp_path / "a.png")]) == 2
    assert ".svg, .html, .cast" in capsys.readouterr().err
    assert main(["replay", str(recorded[0]), "--export", str(tmp_path / "missing" / "a.svg")]) == 2


# --- token text missing -----------------------------------------------------------------------


def strip_text(path: Path, out: Path) -> None:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["kind"] == "Round":
            d.pop("rejected_text")
            for t in d["tokens"]:
                t.pop("piece")
        elif d["kind"] == "TurnEnd":
            d.pop("text")
        lines.append(json.dumps(d))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.model
def test_a_trace_without_text_needs_the_model_and_is_rebuilt_from_the_ids(recorded, tmp_path, capsys):
    path, data = recorded
    bare = tmp_path / "bare.jsonl"
    strip_text(path, bare)
    assert main(["replay", str(bare), "--export", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "token ids without their text" in err and "SmolLM2-135M-Instruct.Q4_1.gguf" in err
    assert main(["replay", str(bare), "-m", "smollm2-135m-instruct-q4_1", "--export", str(tmp_path / "x.cast")]) == 0
    assert main(["replay", str(path), "--export", str(tmp_path / "y.cast")]) == 0
    assert (tmp_path / "x.cast").read_text() == (tmp_path / "y.cast").read_text()


@pytest.mark.model
def test_replaying_never_loads_a_model_unless_asked(recorded, tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(model_module.Model, "__init__", refuse)
    assert main(["replay", str(recorded[0]), "--export", str(tmp_path / "a.svg")]) == 0


# --- bad traces ---------------------------------------------------------------------------------


def damaged(recorded, tmp_path, how) -> Path:
    lines = recorded[0].read_text(encoding="utf-8").splitlines(keepends=True)
    out = tmp_path / "bad.jsonl"
    out.write_bytes(how(lines))
    return out


def version_99(lines):
    head = json.loads(lines[0])
    return (json.dumps({**head, "version": 99}) + "\n" + "".join(lines[1:])).encode()


def bad_config(lines):
    start = json.loads(lines[2])
    start["config"]["draft_n_max"] = -4
    return (lines[0] + lines[1] + json.dumps(start) + "\n" + "".join(lines[3:])).encode()


CASES = {
    "truncated mid-line": (lambda ls: "".join(ls)[:-40].encode(), r"line \d+: cut off: the trace is truncated"),
    "truncated at a line end": (lambda ls: "".join(ls[:-1]).encode(), r"line 2: this turn has no end"),
    "garbled line": (lambda ls: ("".join(ls[:4]) + "{not json\n" + "".join(ls[5:])).encode(), r"line 5: not JSON"),
    "binary": (lambda ls: ls[0].encode() + b"\xff\xfe\x00garbage\n", r"line 2: not UTF-8"),
    "newer schema": (version_99, r"trace version 99, written by a newer spectui"),
    "not a trace": (lambda ls: b'{"kind": "Round"}\n', r"line 1: not a spectui trace"),
    "empty": (lambda ls: b"", r"is empty"),
    "unknown kind": (
        lambda ls: ("".join(ls[:3]) + '{"kind": "Bogus"}\n' + "".join(ls[3:])).encode(),
        r"line 4: unknown record kind 'Bogus'",
    ),
    "round without fields": (
        lambda ls: ("".join(ls[:4]) + '{"kind": "Round", "index": 0}\n' + "".join(ls[4:])).encode(),
        r"line 5: a malformed Round record",
    ),
    "event outside a turn": (
        lambda ls: (ls[0] + "".join(ls[2:])).encode(),
        r"line 2: a TurnStart record outside a turn",
    ),
    "bad configuration": (bad_config, r"line 3: a TurnStart record with a bad configuration"),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.model
def test_a_bad_trace_is_refused_with_exit_2_and_names_the_line(recorded, tmp_path, capsys, case):
    how, message = CASES[case]
    path = damaged(recorded, tmp_path, how)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_missing_trace_file_is_one_line(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read trace" in capsys.readouterr().err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.model
def test_any_damage_is_refused_cleanly_or_replays(recorded, tmp_path, data):
    """Whatever is cut, swapped or retyped in a real trace, reading gives a trace or a
    UserError (exit 2, one line), and a trace that reads exports without a traceback."""
    lines = recorded[0].read_text(encoding="utf-8").splitlines()
    n = data.draw(st.integers(0, len(lines) - 1))
    d = json.loads(lines[n])
    key = data.draw(st.sampled_from(sorted(d)))
    d[key] = data.draw(
        st.one_of(
            st.none(),
            st.integers(-5, 10**6),
            st.text(max_size=5),
            st.lists(st.integers(-2, 5)),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        )
    )
    lines[n] = json.dumps(d)
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        trace = with_text(trace_format.read(path), None)  # as `spectui replay` reads it, without -m
    except UserError as e:
        assert "\n" not in str(e)
        return
    for suffix in (".html", ".cast"):
        try:
            export(trace, tmp_path / f"fuzz{suffix}", show_rejected=True)
        except UserError:
            pass
