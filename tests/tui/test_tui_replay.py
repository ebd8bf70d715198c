"""`spectui replay` in the TUI, and saving traces from the chat and the A/B view; all on
the recorded SmolLM2 trace (tests/data/smollm2_turn.jsonl), no model loaded."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from spectui.config import paths
from spectui.config.embedded import CATALOG
from spectui.config.model_choice import recorded_name
from spectui.engine.events import Round
from spectui.spec_config import SpecConfig
from spectui.trace import format as trace_format
from spectui.trace.format import Trace, TraceTurn
from spectui.tui.app import SpecApp
from spectui.tui.replay_app import ReplayApp
from spectui.tui.screens.ab import ABScreen
from spectui.tui.screens.ab_replay import ABReplayScreen
from spectui.tui.screens.replay import ChatReplayScreen
from spectui.tui.widgets.message import AssistantMessage, UserMessage
from spectui.tui.widgets.side_pane import SidePane, VerdictBox
from spectui.tui.widgets.stats_panel import StatsPanel
from spectui.tui.widgets.transcript import Transcript
from tests.conftest import SMOL
from tests.fake_session import FakeSession, load_trace
from tests.helpers.events import ANSWER_ROUNDS, recorded
from tests.textual_private import notices
from tests.tui_helpers import chat_args, resolved, rounds_so_far, run_ab, send, sync, until

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs

SIZE = (120, 36)


def rounds_of(turn: TraceTurn) -> list[Round]:
    return [e for e in turn.events if isinstance(e, Round)]


def two_turns() -> Trace:
    trace = load_trace()
    trace.turns.append(replace(trace.turns[0], prompt="And again?"))
    return trace


def ab_trace() -> Trace:
    """A recorded A/B run: A per token without drafting, B in draft-simple rounds."""
    per_token = [([], "", p) for accepted, _, last in ANSWER_ROUNDS for p in accepted + [last]]
    prompt = "Write a python function that adds two numbers."
    return Trace(
        load_trace().header,
        [
            TraceTurn(prompt, recorded("none", per_token, 20.0), side="A"),
            TraceTurn(prompt, recorded("draft-simple", ANSWER_ROUNDS, 50.0), side="B"),
        ],
    )


def shown_text(app: ReplayApp) -> str:
    return app.replay.live.message.content


# --- replaying a chat trace ------------------------------------------------------------------


@sync
async def test_stepping_moves_one_round_at_a_time_both_ways():
    trace = load_trace()
    rounds = rounds_of(trace.turns[0])
    app = ReplayApp(trace, playing=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ChatReplayScreen) and shown_text(app) == ""
        for _ in range(3):
            await pilot.press("right")
        assert shown_text(app) == "".join(t.piece for r in rounds[:3] for t in r.tokens)
        await pilot.press("left")
        assert shown_text(app) == "".join(t.piece for r in rounds[:2] for t in r.tokens)
        status = app.screen.query_one("#status").visual.plain
        assert "paused" in status and f"round 2/{len(rounds)}" in status
        await pilot.press("end")
        assert shown_text(app) == trace.turns[0].end.text and not app.replay.live.running
        # the recorded answer stopped at -n 48: its line says so
        assert "cut off at the answer limit" in app.screen.query_one(AssistantMessage)._meta.visual.plain
        panel = app.screen.query_one(StatsPanel)
        assert panel.state.events == trace.turns[0].events
        assert "recorded on AMD EPYC" in panel.state.memory or "recorded on" in panel.state.memory
        assert panel.state.n_past == rounds[-1].n_past
        # the names the chat gives them (the catalog's titles, found by the recorded hash), not general.name
        assert app.screen.sub_title == "replay of SmolLM2 135M Instruct Q4_1 ⇠ draft SmolLM2 135M Instruct Q4_1"


def test_a_recorded_model_is_named_as_the_chat_names_it():
    assert recorded_name({"file": "SmolLM2-135M-Instruct.Q4_1.gguf", "sha256": CATALOG[SMOL].sha256[:12]}) == (
        "SmolLM2 135M Instruct Q4_1"
    )
    assert (
        recorded_name({"file": "/m/Qwen3-8B-Q4_K_M.gguf", "sha256": "0" * 64, "name": "Qwen3 8B"}) == "Qwen3-8B-Q4_K_M"
    )
    assert recorded_name({"name": "Qwen3 8B"}) == "Qwen3 8B" and recorded_name(None) is None


@sync
async def test_plays_at_the_chosen_speed_and_keys_change_it():
    trace = load_trace()
    duration = trace.turns[0].events[-1].t - trace.turns[0].events[0].t
    app = ReplayApp(trace, speed=10.0)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.replay.playhead.at_end, timeout=duration / 10 + 10)
        assert shown_text(app) == trace.turns[0].end.text
        await until(pilot, lambda: "paused" in app.screen.query_one("#status").visual.plain, timeout=5)
        await pilot.press("minus")
        await pilot.press("minus")
        assert app.replay.playhead.speed == 2.0
        await pilot.press("plus")
        assert app.replay.playhead.speed == 4.0 and "×4" in app.screen.query_one("#status").visual.plain
        for _ in range(4):
            await pilot.press("minus")
        assert app.replay.playhead.speed == 0.25  # the slowest: the first round is seconds away
        await pilot.press("space")  # at the end: plays again from the start
        assert app.replay.playhead.playing and app.replay.playhead.pos == 0
        await pilot.pause()
        assert shown_text(app) == ""


@sync
async def test_moving_across_turns_rebuilds_the_transcript():
    trace = two_turns()
    app = ReplayApp(trace, playing=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        assert len(app.screen.query(UserMessage)) == 2 and len(app.screen.query(AssistantMessage)) == 2
        n = len(rounds_of(trace.turns[1]))
        for _ in range(n + 1):  # back over the second turn's rounds and its prompt
            await pilot.press("left")
        assert len(app.screen.query(UserMessage)) == 1
        assert shown_text(app) == trace.turns[0].end.text


@sync
async def test_rejected_tokens_toggle_in_the_replay():
    trace = load_trace()
    app = ReplayApp(trace, playing=False, show_rejected=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        assert not app.screen.query_one(AssistantMessage).show_rejected
        await pilot.press("ctrl+f")
        assert app.screen.query_one(AssistantMessage).show_rejected


@sync
async def test_an_ab_trace_replays_side_by_side_with_its_verdict():
    app = ReplayApp(ab_trace(), playing=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ABReplayScreen)
        assert "replaying A" in app.screen.query_one("#ab-verdict").visual.plain
        await pilot.press("end")
        verdict = app.screen.query_one("#ab-verdict").visual.plain
        assert "speedup ×" in verdict and "output identical" in verdict
        assert "enter" not in verdict  # a replay cannot run the pair again
        a, b = app.screen.query("SidePane")
        assert a.turn.message.content == b.turn.message.content != ""
        await pilot.press("left")
        assert "replaying B" in app.screen.query_one("#ab-verdict").visual.plain
        assert b.turn.running and not a.turn.running


@sync
async def test_an_ab_replay_at_80x24_gives_each_answer_five_lines_and_the_verdict_whole():
    app = ReplayApp(ab_trace(), playing=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        screen = app.screen
        bottom = screen.query_one("#status").region.y
        for pane in screen.query(SidePane):
            assert pane.query_one(".answers").scrollable_content_region.height >= 5
            assert pane.query_one(".side-line").region.bottom <= bottom
        box, verdict = screen.query_one(VerdictBox), screen.query_one("#ab-verdict")
        assert box.region.bottom <= bottom and verdict.region.height <= box.scrollable_content_region.height


@sync
async def test_an_ab_trace_plays_to_its_verdict_at_full_speed():
    app = ReplayApp(ab_trace(), speed=10.0, playing=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: "speedup ×" in app.screen.query_one("#ab-verdict").visual.plain, 30)
        a, b = app.screen.query("SidePane")
        assert not a.turn.running and not b.turn.running


@sync
async def test_an_unexpected_error_ends_the_app_with_its_traceback_in_the_crash_log(dirs, monkeypatch, capsys):
    app = ReplayApp(load_trace(), playing=False)
    with pytest.raises(ZeroDivisionError):
        async with app.run_test() as pilot:
            app.call_later(lambda: 1 / 0)
            await pilot.pause()
    assert app.return_code == 1
    log = (dirs / "data" / "crash.log").read_text(encoding="utf-8")
    assert "ZeroDivisionError" in log and "Traceback" in log
    monkeypatch.setattr(ReplayApp, "run", lambda self: setattr(self, "_return_code", 1))
    assert ReplayApp(load_trace()).run_reporting() == 1
    assert f"its traceback is in {dirs / 'data' / 'crash.log'}" in capsys.readouterr().err


def test_replay_snapshot(snap_compare):
    trace = load_trace()

    async def at_end(pilot):
        await pilot.press("end")
        await until(pilot, lambda: shown_text(pilot.app) == trace.turns[0].end.text)
        await pilot.pause()

    assert snap_compare(ReplayApp(trace, playing=False), terminal_size=SIZE, run_before=at_end)


def test_ab_replay_snapshot(snap_compare):
    async def at_end(pilot):
        await pilot.press("end")
        await pilot.pause()

    assert snap_compare(ReplayApp(ab_trace(), playing=False), terminal_size=(140, 40), run_before=at_end)


# --- saving traces from the chat and the A/B view ----------------------------------------------


@pytest.fixture
def app_for():
    def make(flags=("-n", "48")):
        setup = resolved(chat_args(*flags))
        return SpecApp(setup, session=FakeSession(spec=setup.spec), environment=load_trace().header["environment"])

    return make


@sync
async def test_f3_saves_the_chats_trace_and_it_replays(app_for, dirs):
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")  # nothing yet
        for prompt in ("Add two numbers.", "Again, please."):
            await send(pilot, app, prompt)
            await until(
                pilot, lambda: app.controller.conversation.turn is not None and not app.controller.state.generating
            )
        await pilot.press("f3")
        saved = paths.traces_dir() / f"spectui-trace-{app.controller.state.chat.id}.jsonl"
        await until(pilot, saved.exists, timeout=5)
        # where the A/B view's ctrl+s saves (the data folder's traces/), and the notice says so
        said = [n.message for n in notices(app) if n.title == "Saved the trace of 2 answers"]
        assert said == [f"in the traces folder: {saved}\nreplay it with: spectui replay {saved}"]
        assert saved.is_relative_to(dirs / "data") and not list(dirs.glob("spectui-trace-*"))
    trace = trace_format.read(saved)
    assert [t.prompt for t in trace.turns] == ["Add two numbers.", "Again, please."]
    assert trace.header["recorded_by"] == "spectui chat" and trace.header["settings"]["n_predict"] == 48
    assert trace.header["environment"]["models"]["target"]["file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert [t.end.text for t in trace.turns] == [m.content for m in app.controller.state.chat.messages[1::2]]


@sync
async def test_record_every_chat_appends_each_answer(app_for, dirs):
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await app.run_action("toggle_record_traces")
        assert app.settings.record_traces
        for prompt in ("One.", "Two."):
            await send(pilot, app, prompt)
            await until(
                pilot, lambda: app.controller.conversation.turn is not None and not app.controller.state.generating
            )
        chat_id = app.controller.state.chat.id
    trace = trace_format.read(dirs / "data" / "traces" / f"{chat_id}.jsonl")
    assert [t.prompt for t in trace.turns] == ["One.", "Two."]


@sync
async def test_a_configuration_change_mid_answer_is_in_the_trace(dirs):
    setup = resolved(chat_args("-n", "48"))
    app = SpecApp(
        setup, session=FakeSession(spec=setup.spec, round_s=0.05), environment=load_trace().header["environment"]
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "Add two numbers.")
        await until(
            pilot,
            lambda: rounds_so_far(app) >= 2,
        )
        await pilot.press("ctrl+up")
        await until(pilot, lambda: not app.controller.state.generating)
        await pilot.press("f3")
        saved = paths.traces_dir() / f"spectui-trace-{app.controller.state.chat.id}.jsonl"
        await until(pilot, saved.exists, timeout=5)
    [turn] = trace_format.read(saved).turns
    assert [c.config["draft_n_max"] for c in turn.changes] == [4]
    kinds = [json.loads(line)["kind"] for line in saved.read_text().splitlines()]
    assert kinds.index("config") < len(kinds) - 1 and kinds[-1] == "TurnEnd"


@sync
async def test_the_ab_view_saves_both_sides_in_one_trace_in_the_data_folder_and_names_it(app_for, dirs):
    app = app_for()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, ABScreen)
        await run_ab(pilot, screen, "Add two numbers.")
        await until(pilot, lambda: screen.verdict is not None)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: list(paths.traces_dir().glob("spectui-ab-*.jsonl")), timeout=5)
        [saved] = paths.traces_dir().glob("spectui-ab-*.jsonl")
        # where the README says (the data folder, SPECTUI_DATA_DIR here), and the notice says where
        assert saved.is_relative_to(dirs / "data") and not list(dirs.glob("spectui-ab-*"))
        said = [n.message for n in notices(app) if n.title == "Saved the A/B trace"]
        assert said == [f"in the traces folder: {saved}\nreplay it with: spectui replay {saved}"]
    trace = trace_format.read(saved)
    assert [t.side for t in trace.turns] == ["A", "B"] and trace.is_ab
    assert [SpecConfig.from_dict(t.events[0].config).label for t in trace.turns] == ["none", "draft-simple"]


@sync
async def test_home_after_end_goes_back_to_the_start():
    """At 60x14 the whole answer overflows the transcript, which then took home as a scroll key."""
    trace = load_trace()
    app = ReplayApp(trace, playing=False)
    async with app.run_test(size=(60, 14)) as pilot:
        await pilot.press("end")
        await until(pilot, lambda: shown_text(app) == trace.turns[0].end.text)
        assert app.screen.query_one(Transcript).allow_vertical_scroll  # the answer overflows, as it did in the trial
        await pilot.press("home")
        await until(pilot, lambda: app.replay.playhead.pos == 0)
        assert shown_text(app) == "" and "round 0/" in app.screen.query_one("#status").visual.plain
