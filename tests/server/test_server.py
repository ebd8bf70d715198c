"""spectui watching a real llama-server: built from llama-cpp-python's vendored llama.cpp by
tests/server/build.sh (cached; .ci/run builds it), running SmolLM2 as its own draft on
127.0.0.1 with a free port."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from spectui.engine.events import Round, StopReason, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.server import ServerSession, connect
from spectui.engine.server_wire import rejected_marker
from spectui.errors import UserError
from spectui.spec_types import Spec
from spectui.trace import format as trace_format
from tests.helpers.events import events_of
from tests.helpers.processes import spectui
from tests.helpers.prompts import PROMPT
from tests.server.llama_server import GREEDY, Server, free_port
from tests.textual_private import notices


@pytest.fixture(scope="module")
def drafting(server_bin, smol_path):
    server = Server(
        server_bin, smol_path, "-md", str(smol_path), "--spec-type", "draft-simple", "--spec-draft-n-max", "3"
    )
    yield server
    server.stop()


def test_rounds_add_up_to_the_servers_own_totals_and_text(drafting):
    session = ServerSession(drafting.url, GREEDY)
    assert session.spec.label == "draft-simple" and session.choices() == ((Spec.DRAFT_SIMPLE,),)
    before = drafting.metrics()
    events = events_of(session)
    after = drafting.metrics()
    rounds = [e for e in events if isinstance(e, Round)]
    end = events[-1]
    assert (
        isinstance(events[0], TurnStart)
        and isinstance(end, TurnEnd)
        and end.stop_reason in (StopReason.EOS, StopReason.N_PREDICT)
    )
    delta = {k: after[k] - before.get(k, 0.0) for k in after}
    assert sum(r.n_accepted for r in rounds) == delta["spec_decode_num_accepted_tokens_total"] > 0
    assert sum(r.n_drafted for r in rounds) == delta["spec_decode_num_draft_tokens_total"]
    assert sum(1 for r in rounds if r.n_drafted) == delta["spec_decode_num_drafts_total"]
    assert "".join(t.piece for r in rounds for t in r.tokens) == end.text != ""
    # the same request without streaming: the server's own completion text
    prompt = session._json("/apply-template", {"messages": chat_messages([("user", PROMPT)])})["prompt"]
    plain = session._json("/completion", {"prompt": prompt, "n_predict": 48, "temperature": 0.0})
    assert plain["content"] == end.text
    for r in rounds:
        n_rejected = r.n_drafted - r.n_accepted
        assert r.rejected_text == (rejected_marker(n_rejected) if n_rejected else "")
        assert [t.source.value for t in r.tokens] == ["draft"] * r.n_accepted + ["target"] * (
            len(r.tokens) - r.n_accepted
        )
    assert [r.t for r in rounds] == sorted(r.t for r in rounds)  # the server's clock


@pytest.mark.model
def test_speculation_is_fixed_by_the_server_and_said_so(drafting):
    session = ServerSession(drafting.url, GREEDY)
    with pytest.raises(UserError, match="fixes its speculation when it starts"):
        session.configure(session.spec.with_types("ngram-mod"))
    with pytest.raises(UserError, match="fixes its speculation"):
        session.configure(session.spec.replace(draft_n_max=5))
    session.configure(session.spec)  # the server's own configuration is fine


@pytest.mark.model
def test_cancel_ends_the_answer_and_keeps_what_came(drafting):
    session = ServerSession(drafting.url, GREEDY)
    events = []
    for e in session.generate(chat_messages([("user", PROMPT)]), limits=GenerationLimits(n_predict=200)):
        events.append(e)
        if sum(isinstance(x, Round) for x in events) == 3:
            session.cancel()
    end = events[-1]
    assert end.stop_reason == StopReason.CANCELLED
    assert end.text == "".join(t.piece for r in events if isinstance(r, Round) for t in r.tokens) != ""


# --- the commands against the server ------------------------------------------------------------


@pytest.mark.model
def test_run_against_the_server_prints_json_and_writes_a_trace_without_the_key(server_bin, smol_path, tmp_path):
    server = Server(
        server_bin, smol_path, "-md", str(smol_path), "--spec-type", "draft-simple", "--api-key", "s3cret-key"
    )
    try:
        trace = tmp_path / "t.jsonl"
        r = spectui(
            "run",
            "--server",
            server.url,
            "--temp",
            "0",
            "-n",
            "24",
            "--json",
            "--trace",
            str(trace),
            PROMPT,
            env={"LLAMA_API_KEY": "s3cret-key"},
        )
        assert r.returncode == 0, r.stderr
        data = json.loads(r.stdout)
        assert data["text"] and data["stats"]["n_accepted"] > 0 and data["config"]["spec_type"] == "draft-simple"
        assert "s3cret-key" not in trace.read_text() and "s3cret-key" not in r.stderr
        [turn] = trace_format.read(trace).turns
        assert turn.end.text == data["text"]
        assert trace_format.read(trace).header["environment"]["server"]["url"] == server.url
        wrong = spectui("run", "--server", server.url, "-n", "4", PROMPT, env={"LLAMA_API_KEY": "nope"})
        assert wrong.returncode == 2 and "refused the API key (401)" in wrong.stderr
        none = spectui("run", "--server", server.url, "-n", "4", PROMPT, env={"LLAMA_API_KEY": None})
        assert none.returncode == 2 and "wants an API key (401): set LLAMA_API_KEY" in none.stderr
    finally:
        server.stop()


@pytest.fixture(scope="module")
def plain(server_bin, smol_path):
    server = Server(server_bin, smol_path)
    yield server
    server.stop()


@pytest.mark.model
def test_two_servers_are_two_configurations_to_switch_between(drafting, plain):
    pool = connect(f"{drafting.url},{plain.url}", GREEDY, 3)
    assert pool.choices() == ((Spec.DRAFT_SIMPLE,), (Spec.NONE,)) and pool.spec.label == "draft-simple"
    pool.configure(pool.spec.with_types("none"))
    assert pool.status().spec.label == "none" and pool.status().choices == pool.choices()
    rounds = [e for e in events_of(pool, n=8) if isinstance(e, Round)]
    assert len(rounds) == 8 and not any(r.n_drafted for r in rounds)
    with pytest.raises(UserError, match="no server runs ngram-mod; these do: draft-simple, none"):
        pool.configure(pool.spec.with_types("ngram-mod"))


@pytest.mark.model
def test_bench_against_two_servers_measures_the_speedup(drafting, plain, tmp_path):
    out = tmp_path / "r.json"
    r = spectui(
        "bench",
        "--server",
        f"{drafting.url},{plain.url}",
        "--lang",
        "en",
        "--category",
        "code",
        "--limit",
        "1",
        "--repeat",
        "1",
        "-n",
        "16",
        "--json",
        str(out),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [c["label"] for c in doc["configs"]] == ["none", "draft-simple"]
    assert doc["environment"]["server"]["url"] == drafting.url and doc["environment"]["server"]["build_info"]
    assert [s["url"] for s in doc["environment"]["servers"]] == [drafting.url, plain.url]
    rows = {row["config"]: row for row in doc["results"]}
    assert rows["draft-simple"]["n_drafted"] > 0 and rows["none"]["n_drafted"] == 0
    assert isinstance(rows["draft-simple"]["speedup"], float)
    assert all(row["n_generated"] == 16 for row in rows.values())
    wide = {s["url"]: s for s in doc["server_counters"]}  # each server's own, over the run
    assert wide[drafting.url]["counters"]["drafted"] >= rows["draft-simple"]["n_drafted"] > 0
    assert wide[plain.url]["counters"]["drafted"] == 0 and wide[plain.url]["notes"] == []  # the baseline


@pytest.mark.model
def test_a_server_without_speculation_says_so(server_bin, smol_path):
    server = Server(server_bin, smol_path)
    try:
        session = ServerSession(server.url, GREEDY)
        assert session.spec.label == "none" and session.status().draft is None
        rounds = [e for e in events_of(session, n=12) if isinstance(e, Round)]
        assert len(rounds) == 12 and all(r.n_drafted == 0 for r in rounds)
    finally:
        server.stop()


# --- faults ----------------------------------------------------------------------------------


def test_a_server_that_is_down_is_one_line(capsys):
    from spectui.cli.main import main

    assert main(["run", "--server", f"http://127.0.0.1:{free_port()}", "-n", "4", "hi"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach llama-server at http://127.0.0.1:" in err and len(err.strip().splitlines()) == 1


def test_a_url_that_is_not_a_llama_server(capsys):
    from spectui.cli.main import main

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        assert main(["run", "--server", f"http://127.0.0.1:{httpd.server_port}", "-n", "4", "hi"]) == 2
        assert "is it a llama-server?" in capsys.readouterr().err
    finally:
        httpd.shutdown()


@pytest.mark.model
def test_a_dropped_connection_keeps_the_text_and_marks_the_answer_cut(server_bin, smol_path):
    server = Server(server_bin, smol_path, "-md", str(smol_path), "--spec-type", "draft-simple")
    session = ServerSession(server.url, GREEDY)
    events = []
    try:
        for e in session.generate(chat_messages([("user", PROMPT)]), limits=GenerationLimits(n_predict=400)):
            events.append(e)
            if sum(isinstance(x, Round) for x in events) == 2:
                server.stop()
    finally:
        server.stop()
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.stop_reason == StopReason.ERROR and "lost" in end.error
    assert end.text == "".join(t.piece for r in events if isinstance(r, Round) for t in r.tokens) != ""


# --- the chat and the A/B view on a server -----------------------------------------------------


@pytest.mark.model
def test_chat_and_ab_view_on_the_server(drafting, tmp_path, monkeypatch):
    from spectui.tui.app import SpecApp
    from spectui.tui.screens.ab import ABScreen
    from spectui.tui.widgets.stats_panel import render
    from tests.tui_helpers import answered, chat_args, resolved, run_ab, send, sync, until

    monkeypatch.setenv("SPECTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SPECTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    setup = resolved(chat_args("--server", drafting.url, "-n", "32"))
    session = ServerSession(drafting.url, setup.sampling())

    @sync
    async def drive():
        app = SpecApp(setup, session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            await send(pilot, app, PROMPT)
            await answered(pilot, app)
            message = app.controller.state.chat.messages[-1]
            assert message.content == app.controller.conversation.turn.end.text != ""
            assert "draft" in {kind for _, kind in message.segments}
            assert "Server, all slots" in render(app.controller.conversation.panel_state()).plain
            assert app.chat_screen.sub_title == "SmolLM2 135M Instruct Q4_1 ⇠ draft on the server"
            await pilot.press("ctrl+up")  # n-max: fixed by the server
            assert any("fixes its speculation" in n.message for n in notices(app))
            assert session.spec.draft_n_max == 3
            await pilot.press("f2")
            screen = app.screen
            assert isinstance(screen, ABScreen)
            await run_ab(pilot, screen, "Say hi.")
            await until(pilot, lambda: screen.verdict is not None)
            assert all(p.turn.end.text for p in screen.panes)

    drive()
