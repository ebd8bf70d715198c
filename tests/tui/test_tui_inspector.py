"""The token inspector with Pilot: f7 in the chat (and enter on a round in f11's list),
i in `spectui replay`; ←/→ and ↑/↓ move the cursor, the panel reads the token's facts and
the transcript highlights it; esc leaves. On a FakeSession / trace replaying recorded rounds
given verdicts (tests/helpers/events.py's `judged`): the model is not what is tested here."""

from __future__ import annotations

import pytest

from spectui.chat.inspector import NO_DATA
from spectui.cli.export import export
from spectui.engine.events import Round
from spectui.store import chat_store
from spectui.trace import format as trace_format
from spectui.trace.format import Trace, TraceTurn
from spectui.tui.app import SpecApp
from spectui.tui.replay_app import ReplayApp
from spectui.tui.screens.rounds import RoundsScreen
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.inspector import InspectorPanel
from spectui.tui.widgets.markdown import MARKED
from spectui.tui.widgets.message import AnswerChunk, AssistantMessage
from tests.fake_session import PROMPT, FakeSession, load_trace
from tests.helpers.events import ANSWER_ROUNDS, judged, recorded
from tests.helpers.html_spans import Spans
from tests.tui_helpers import answered, send, sync, until

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs

SIZE = (120, 40)
SUMMARY = "1 rejection: 1 near-tie (top-1 - top-2 < 0.1), 0 confident draft errors (q > 0.8, p < 0.1)"


def events(inspected: bool = True) -> list:
    plain = recorded("draft-simple", ANSWER_ROUNDS, 50.0)
    return judged(plain) if inspected else plain


def panel_text(app) -> str:
    return app.screen.query_one(InspectorPanel).visual.plain


def highlighted(app) -> str:
    """The text the transcript shows highlighted (the token under the cursor)."""
    return "".join(
        chunk._content.plain[s.start : s.end]
        for chunk in app.screen.query(AnswerChunk)
        for s in chunk._content.spans
        if s.style == MARKED
    )


async def asked(pilot, app: SpecApp) -> None:
    await send(pilot, app, PROMPT)
    await answered(pilot, app)
    await pilot.pause()


@sync
async def test_f7_walks_the_last_answer_and_reads_each_token(setup):
    app = SpecApp(setup, session=FakeSession(events=events(), spec=setup.spec))
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        await pilot.press("f7")
        panel = app.screen.query_one(InspectorPanel)
        assert panel.is_open and panel.has_focus and panel.display
        text = panel_text(app)
        assert text.startswith(SUMMARY) and "'↵'  target / bonus" in text and "bonus token" in text
        assert highlighted(app) == "\n"
        await pilot.press("up")  # the previous rejected draft
        text = panel_text(app)
        assert "' c'  rejected draft 1 of 1: 1 token (draft-simple) · round 2 of 4" in text
        assert "p 0.410 · q 0.600" in text and "rejected: the target chose another token" in text
        assert (
            "target's top 3: '):\\n' 0.460 · ' d' 0.410 · ' b' 0.050" in text
            and "emitted '):\\n' instead (a near-tie)" in text
        )
        assert highlighted(app) == " c"  # struck through, and reachable
        await pilot.press("left")
        assert "' b'  accepted (draft model)" in panel_text(app) and "p 0.900 · q 0.700" in panel_text(app)
        assert highlighted(app) == " b"
        await pilot.press("right", "right")
        assert "emitted by the target instead of the rejected draft ' c'" in panel_text(app)
        meta = app.screen.query_one(AssistantMessage)._meta.visual.plain
        assert "89% accepted" in meta and "1 rejection: 1 near-tie, 0 confident draft errors" in meta
        saved = chat_store.load_chat(app.controller.state.chat.id).messages[-1].stats["inspect"]
        assert saved == {"rejections": 1, "near_ties": 1, "confident_errors": 0, "median_rejected_p": 0.41}
        await pilot.press("escape")  # leaves the inspector; nothing stops
        assert not panel.is_open and not panel.display and highlighted(app) == ""
        assert app.query_one(ChatInput).has_focus


@sync
async def test_f11_enter_on_a_round_inspects_from_there(setup):
    app = SpecApp(setup, session=FakeSession(events=events(), spec=setup.spec))
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        await pilot.press("f11")
        assert isinstance(app.screen, RoundsScreen)
        await pilot.press("up", "up", "enter")  # the last row is round 4: up twice is round 2
        await pilot.pause()
        assert "' b'  accepted (draft model) · round 2 of 4" in panel_text(app)
        assert highlighted(app) == " b"


@sync
async def test_page_up_and_down_walk_the_other_answers(setup):
    app = SpecApp(setup, session=FakeSession(events=events(), spec=setup.spec))
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        await asked(pilot, app)
        first, second = app.screen.query(AssistantMessage)
        await pilot.press("f7")
        panel = app.screen.query_one(InspectorPanel)
        assert panel.answer is second
        await pilot.press("pageup")
        assert panel.answer is first and panel.cursor.stop.text == "\n"
        await pilot.press("up")
        assert panel.answer is first and highlighted(app) == " c"
        await pilot.press("pageup")  # none before the first: it stays
        assert panel.answer is first and panel.is_open
        await pilot.press("pagedown")
        assert panel.answer is second


def marked_on_screen(app) -> bool:
    """The highlighted token's line is inside the transcript's visible part."""
    transcript = app.screen.query_one("#transcript")
    chunk = next(c for c in app.screen.query(AnswerChunk) if c.mark is not None)
    y = chunk.region.y + chunk.marked_line() if chunk.region else -1
    return transcript.region.y <= y < transcript.region.bottom


@sync
async def test_the_transcript_follows_the_cursor_through_a_long_answer(setup):
    long = judged(recorded("draft-simple", ANSWER_ROUNDS * 12, 50.0))  # 48 rounds, 24 lines: more than 80x24 shows
    app = SpecApp(setup, session=FakeSession(events=long, spec=setup.spec))
    async with app.run_test(size=(80, 24)) as pilot:
        await asked(pilot, app)
        await pilot.press("f7")
        await until(pilot, lambda: marked_on_screen(app), timeout=10)
        await pilot.press("home")
        assert highlighted(app) == "def"
        await until(pilot, lambda: marked_on_screen(app), timeout=10)  # the answer's first line, far above
        for _ in range(6):
            await pilot.press("down")
        assert highlighted(app) == " c"
        await until(pilot, lambda: marked_on_screen(app), timeout=10)


@sync
async def test_an_answer_without_inspect_data_says_so(setup):
    app = SpecApp(setup, session=FakeSession(events=events(inspected=False), spec=setup.spec))
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        await pilot.press("f7", "up")
        text = panel_text(app)
        assert text.startswith(NO_DATA) and "' c'  rejected draft" in text
        assert "shift+f7 turns inspect on" in text


@sync
async def test_f7_before_any_answer_only_says_why(setup):
    app = SpecApp(setup, session=FakeSession(events=events(), spec=setup.spec))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f7")
        assert not app.screen.query(InspectorPanel)


def inspected_trace() -> Trace:
    return Trace(load_trace().header, [TraceTurn(PROMPT, events())])


@sync
async def test_replay_offers_the_same_cursor():
    app = ReplayApp(inspected_trace(), playing=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "i", "up")
        text = panel_text(app)
        assert text.startswith(SUMMARY) and "' c'  rejected draft 1 of 1: 1 token" in text
        assert "target's top 3: '):\\n' 0.460 · ' d' 0.410 · ' b' 0.050" in text
        assert highlighted(app) == " c"
        await pilot.press("escape", "left")  # the keys step rounds again
        rounds = [e for e in inspected_trace().turns[0].events if isinstance(e, Round)]
        assert app.replay.live is not None and len(app.replay.live.rounds) == len(rounds) - 1
        await pilot.press("i")  # opened on a replay that moved: the answer on screen now
        assert "round 3 of 3" in panel_text(app)


@sync
async def test_the_replay_walks_the_earlier_turns_answers_too():
    trace = inspected_trace()
    trace.turns.append(TraceTurn("And again?", events(inspected=False)))
    app = ReplayApp(trace, playing=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "i")
        assert panel_text(app).startswith(NO_DATA)  # the second turn was given without inspect
        await pilot.press("pageup", "up")
        assert panel_text(app).startswith(SUMMARY) and "' c'  rejected draft" in panel_text(app)


@sync
async def test_the_chat_the_replay_and_the_html_export_of_its_trace_read_the_same(setup, tmp_path):
    app = SpecApp(setup, session=FakeSession(events=events(), spec=setup.spec))
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        await pilot.press("f7", "up")
        in_chat = panel_text(app)
        path = tmp_path / "chat.jsonl"
        Trace(app.controller.persistence.trace_header("spectui chat"), app.controller.persistence.traced).write(path)
    replay = ReplayApp(trace_format.read(path), playing=False)
    async with replay.run_test(size=SIZE) as pilot:
        await pilot.press("end", "i", "up")
        assert panel_text(replay) == in_chat and "target's top 3" in in_chat
    page = export(trace_format.read(path), tmp_path / "chat.html", show_rejected=True)
    spans = Spans()
    spans.feed(page.read_text(encoding="utf-8"))
    tip = next(span["title"] for span in spans.spans if span["text"] == " c")  # the rejected draft's tooltip
    verdict_lines = in_chat.splitlines()[2:]  # after the summary and the stop
    assert verdict_lines[:2] == ["rejected: the target chose another token", "p 0.410 · q 0.600"]
    assert all(line in tip.splitlines() for line in verdict_lines)


async def at_the_rejection(pilot) -> None:
    await pilot.press("end", "i", "up")
    await pilot.pause()


# The replay's recorded times keep these screenshots still; a live answer's tok/s would not.
def test_snapshot_of_the_panel_at_a_rejection(snap_compare):
    assert snap_compare(ReplayApp(inspected_trace(), playing=False), terminal_size=SIZE, run_before=at_the_rejection)


def test_snapshot_of_the_panel_at_80x24(snap_compare):
    """The narrow layout keeps the answer, the panel and the status line on screen."""
    app = ReplayApp(inspected_trace(), playing=False)
    assert snap_compare(app, terminal_size=(80, 24), run_before=at_the_rejection)


@sync
@pytest.mark.model
async def test_inspect_on_records_the_numbers_the_panel_reads(fresh, setup):
    """On SmolLM2: shift+f7, an answer, f7: the panel reads the engine's own verdicts."""
    app = SpecApp(setup, session=fresh)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("shift+f7")
            assert app.controller.switcher.inspect and fresh.inspect
            await send(pilot, app, PROMPT)
            await answered(pilot, app)
            rounds = app.controller.conversation.turn.rounds
            verdict = next(v for r in rounds for v in r.verdicts if v.accepted)
            await pilot.press("f7", "home")
            for _ in range(len(rounds) * 4):  # to the first judged token
                if f"p {verdict.p:.3f}" in panel_text(app):
                    break
                await pilot.press("right")
            text = panel_text(app)
            assert NO_DATA not in text and f"p {verdict.p:.3f} · q " in text
            assert "accepted: the target's own choice" in text
    finally:
        fresh.inspect = False  # the module's session is shared
