"""A llama-server that takes a request, then stalls or resets part way (a busy or restarting
server): `run`, the chat and the bench end with one line and exit 1, keeping what they
measured. Against tests/helpers/fake_llama.py on 127.0.0.1, with the client's timeouts shortened."""

from __future__ import annotations

import json

import pytest

from spectui.chat.streaming import TurnJob, stream_turn
from spectui.engine import server as server_module
from spectui.engine.interface import GenerationLimits
from spectui.engine.server import ServerSession
from tests.cli_helpers import run_cli
from tests.helpers.fake_llama import FakeLlamaServer, Fault, State, metrics_text

SHORT_S = 0.5  # the client's timeouts here: a stall ends when it passes
pytestmark = pytest.mark.usefixtures("dirs")


@pytest.fixture(autouse=True)
def short_timeouts(monkeypatch):
    monkeypatch.setattr(server_module, "TIMEOUT_S", SHORT_S)
    monkeypatch.setattr(server_module, "METRICS_TIMEOUT_S", SHORT_S)


@pytest.fixture
def servers():
    started: list[FakeLlamaServer] = []

    def start(**state) -> FakeLlamaServer:
        started.append(FakeLlamaServer(State(**state)))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def counted() -> str:
    return metrics_text(0, 0, 0, ())


PATHS = ["/props", "/slots", "/metrics", "/completion", "/apply-template", "/completion stream"]


def error_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("note: ")]
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("how", ["stall", "reset"])
@pytest.mark.parametrize("path", PATHS)
def test_run_against_a_server_that_stalls_or_resets_is_one_line_and_exit_1(servers, path, how):
    fake = servers(metrics=counted)
    fake.state.fault = Fault(path, how)
    r = run_cli("run", "--server", fake.url, "--no-color", "-n", "4", "hi")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    # mid-stream, the summary of the tokens kept comes first: the error is the last line
    line = r.stderr.strip().splitlines()[-1] if path == "/completion stream" else error_line(r.stderr)
    assert line.startswith("error: ") and fake.url in line, line
    where = path.split()[0]
    said = f"stopped answering {where}: nothing for {SHORT_S:g} s" if how == "stall" else f"lost during {where}"
    assert said in line, line
    if path == "/completion stream":  # the answer's first token was streamed: it is kept
        assert r.stdout.startswith(" one")


def test_run_json_keeps_the_tokens_streamed_before_a_reset(servers):
    fake = servers()
    fake.state.fault = Fault("/completion stream", "reset", sent=2)
    r = run_cli("run", "--server", fake.url, "--json", "-n", "4", "hi")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    out = json.loads(r.stdout)
    assert out["text"] == " one two" and out["stop_reason"] == "error" and "lost during /completion" in out["error"]


def test_metrics_that_stall_after_an_answer_keep_the_answer_and_say_why_once(servers):
    fake = servers(metrics=counted)
    session = ServerSession(fake.url)
    fake.state.fault = Fault("/metrics", "stall")
    events = list(session.generate([{"role": "user", "content": "hi"}], limits=GenerationLimits(n_predict=4)))
    assert events[-1].text == " one two three four"
    assert f"stopped answering /metrics: nothing for {SHORT_S:g} s" in session.wide().missing
    assert session.counters() is None  # asked no more


@pytest.mark.parametrize("path", ["/apply-template", "/completion stream"])
def test_the_chat_shows_a_stall_as_the_answers_error(servers, path):
    fake = servers()
    session = ServerSession(fake.url)
    fake.state.fault = Fault(path, "stall", sent=1)
    failed: list[str] = []
    delivered: list = []
    job = TurnJob(session, [{"role": "user", "content": "hi"}], GenerationLimits(n_predict=4))
    stream_turn(job, delivered.extend, failed.append)
    errors = failed + [e.error for e in delivered if getattr(e, "error", "")]
    assert errors == [
        f"llama-server at {fake.url} stopped answering {path.split()[0]}: nothing for {SHORT_S:g} s (busy or hung)"
    ]


def concurrency_bench(tmp_path, *urls: str, repeat: int = 2) -> list[str]:
    return [
        "bench",
        "--server",
        ",".join(urls),
        "--concurrency",
        "1,2",
        "--repeat",
        str(repeat),
        "-n",
        "4",
        "--lang",
        "en",
        "--limit",
        "1",
        "--json",
        str(tmp_path / "r.json"),
    ]


@pytest.mark.parametrize("how", ["stall", "reset"])
@pytest.mark.parametrize("path", ["/metrics", "/completion stream"])
def test_the_concurrency_bench_keeps_the_bursts_before_a_stall_or_reset(servers, tmp_path, path, how):
    base = servers(metrics=counted)
    spec = servers(spec_types="none,ngram-simple", metrics=counted, drafts=[(0, 0), (3, 2), (3, 2), (3, 2)])
    # streams: 2 in the warm-up, 3 in pass 1; /metrics: 3 while connecting, 2 around each burst of pass 1
    spec.state.fault = Fault(path, how, after=5 if path == "/completion stream" else 7)
    r = run_cli(*concurrency_bench(tmp_path, base.url, spec.url))
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "failed: ngram-simple" in r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["partial"] and doc["failed"]
    said = f"stopped answering {path.split()[0]}: nothing for {SHORT_S:g} s" if how == "stall" else "lost during"
    assert said in doc["interrupted"], doc["interrupted"]  # named, not "timed out"
    assert {(b["server"], b["level"], b["repeat"]) for b in doc["bursts"]} >= {
        ("none", 1, 0),
        ("ngram-simple", 1, 0),
        ("none", 2, 0),
        ("ngram-simple", 2, 0),
    }
    assert "verdict" in doc and r.stdout  # the tables were shown


@pytest.mark.parametrize("path", ["/props", "/slots", "/metrics"])
def test_the_concurrency_bench_refuses_a_server_that_stalls_while_connecting(servers, tmp_path, path):
    base = servers(metrics=counted)
    spec = servers(spec_types="none,ngram-simple", metrics=counted)
    spec.state.fault = Fault(path, "stall")
    r = run_cli(*concurrency_bench(tmp_path, base.url, spec.url))
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert f"stopped answering {path}" in r.stderr.strip().splitlines()[-1]  # after the "connecting to" lines


def test_the_header_names_a_draft_on_the_server_only_where_one_drafts(servers):
    """An n-gram server has no draft model: the header's pair reads "(no draft model)"."""
    for spec_types, draft in (("ngram-mod", None), ("draft-simple", "on the server"), ("none", None)):
        status = ServerSession(servers(spec_types=spec_types).url).status()
        assert status.draft == status.draft_path == draft, spec_types
