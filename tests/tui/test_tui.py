"""The chat app driven with Textual's Pilot, plus the app's pure helpers (overlay chunks,
panel text, the hand-over of events).

Tests of the UI alone run on a FakeSession (a recorded answer, no model); those where the
engine and the UI meet (streaming, live reconfiguration, baselines, loading, presets) run
on a real model, SmolLM2 135M drafting for itself, loaded once per module.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from functools import partial

import pytest
from textual.geometry import Offset
from textual.selection import Selection
from textual.widgets import Input, Label, Markdown

from spectui.chat.panel import PanelState, plain_step_s, speedup_reading
from spectui.chat.streaming import RATE, RATE_CPU_BOUND, update_interval
from spectui.chat.turn import Baseline, Growth, LiveTurn
from spectui.cli.run import generate_in_thread
from spectui.config import presets, settings
from spectui.engine import llama_thread
from spectui.engine.batching import EventBatcher
from spectui.engine.events import PromptDone, Round, StopReason, TurnEnd, TurnStart
from spectui.engine.handover import Handover
from spectui.engine.overlay import REJECTED
from spectui.engine.session import Session
from spectui.engine.stats import config_changes
from spectui.llama.model import Model
from spectui.spec_config import SpecConfig
from spectui.spec_types import Spec
from spectui.store import chat_store, chat_types
from spectui.tui.app import SpecApp
from spectui.tui.commands import COMMANDS
from spectui.tui.messages import MemoryMeasured, SessionLoading
from spectui.tui.screens.help import HelpScreen
from spectui.tui.screens.name import NameScreen
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.message import CHUNK_CHARS, AnswerChunk, AssistantMessage
from spectui.tui.widgets.overlay import selected_answer, shown_content, slice_segments, split_point, visible
from spectui.tui.widgets.stats_panel import StatsPanel, StatusStrip, render, rolling_tok_per_s, sparkline
from tests.fake_session import FakeSession
from tests.helpers.events import a_round
from tests.textual_private import notices
from tests.tui_helpers import (
    LONG,
    REJECTED_TEXT,
    SHORT,
    answered,
    chat_args,
    fixed_chat,
    palette_offers,
    resolved,
    rounds_so_far,
    run_ab,
    send,
    sync,
    until,
)

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs


# --- live generation ------------------------------------------------------------------


@sync
@pytest.mark.model
async def test_answer_streams_colour_coded(fresh, setup):
    app = SpecApp(setup, session=fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        message = app.controller.state.chat.messages[-1]
        kinds = {kind for _, kind in message.segments}
        assert "draft" in kinds
        assert "".join(t for t, k in message.segments if k != REJECTED) == message.content != ""
        chunk = app.query(AnswerChunk).last()
        styles = {str(span.style) for span in chunk.render().spans}
        assert "$spec-draft" in styles
        draft_colour = app.theme_variables["spec-draft"].lower()
        assert draft_colour in app.export_screenshot().lower()
        saved = chat_store.load_chat(app.controller.state.chat.id)
        assert saved.messages[-1].content == message.content and not saved.messages[-1].stopped
        assert saved.messages[-1].stats["n_generated"] > 0


@sync
@pytest.mark.model
async def test_spec_type_and_n_max_change_mid_answer(fresh):
    app = SpecApp(resolved(chat_args("-n", "160")), session=fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, LONG)
        await until(
            pilot,
            lambda: rounds_so_far(app) >= 2,
        )
        assert app.controller.state.generating, "the answer ended before the switch; use a longer prompt"
        seen = len(app.controller.conversation.turn.rounds)
        # Both in the same tick (keys are tested below): draft-simple -> ngram-cache, n-max 3 -> 4.
        await app.run_action("spec_type(-1)", app.chat_screen)
        await app.run_action("n_max(1)", app.chat_screen)
        assert fresh.spec.label == "ngram-cache" and fresh.spec.draft_n_max == 4
        await pilot.pause()  # the screen renders the controller's updates after the key's handler
        assert app.chat_screen.title.startswith("ngram-cache · verify")
        await answered(pilot, app)
        rounds = app.controller.conversation.turn.rounds
        changes = config_changes(rounds)
        assert changes and changes[0] >= seen - 1
        assert all((r.configured, r.n_max) == (("draft-simple",), 3) for r in rounds[: changes[0]])
        assert all((r.configured, r.n_max) == (("ngram-cache",), 4) for r in rounds[changes[-1] :])
        assert "→ ngram-cache" in app.controller.state.chat.messages[-1].config_label


@sync
async def test_escape_stops_and_the_next_message_works(slow_fake):
    app = SpecApp(resolved(chat_args("-n", "1000")), session=slow_fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, LONG)
        await until(
            pilot,
            lambda: rounds_so_far(app) >= 2,
        )
        await pilot.press("escape")
        await answered(pilot, app)
        stopped = app.controller.state.chat.messages[-1]
        assert app.controller.conversation.turn.end.stop_reason == StopReason.CANCELLED
        assert stopped.stopped and stopped.stats["stop_reason"] == "cancelled"
        assert chat_store.load_chat(app.controller.state.chat.id).messages[-1].stopped
        assert "stopped" in app.query(AssistantMessage).last()._meta.visual.plain

        slow_fake.round_s = 0.005  # stopped mid-answer; the next answer need not be slow
        await send(pilot, app, "Say hi.")
        await answered(pilot, app)
        assert len(app.controller.state.chat.messages) == 4
        assert app.controller.state.chat.messages[-1].content and not app.controller.state.chat.messages[-1].stopped


@sync
async def test_a_memory_reading_mid_answer_waits_for_the_answers_own_panel_redraw(slow_fake, setup, monkeypatch):
    """Redrawn at once, the panel cost a screen update in the middle of the answer."""
    monkeypatch.setattr(SpecApp, "_measure_memory", lambda self: None)  # only the readings below
    app = SpecApp(setup, session=slow_fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, SHORT)
        await until(
            pilot,
            lambda: rounds_so_far(app) >= 2,
        )
        app.post_message(MemoryMeasured("GPU: none (CPU)\nRSS 7 MiB"))
        await pilot.pause()
        assert "RSS 7 MiB" not in app.chat_screen.query_one(StatsPanel).state.memory
        slow_fake.round_s = 0.005  # read mid-answer; the rest of it need not be slow
        await answered(pilot, app)
        assert app.chat_screen.query_one(StatsPanel).state.memory.endswith("RSS 7 MiB")
        app.post_message(MemoryMeasured("GPU: none (CPU)\nRSS 8 MiB"))  # idle: at once
        await pilot.pause()
        assert app.chat_screen.query_one(StatsPanel).state.memory.endswith("RSS 8 MiB")


@sync
async def test_the_panel_takes_its_live_layout_before_the_first_round(setup):
    """The live panel is taller than the idle one, and a change of height is a layout pass of
    the screen while the model needs the CPU: the turn's start redraws the panel at once,
    even when it was redrawn a moment before (a new chat, then a quick question). Its first
    round comes half a second after the start, so a busy machine cannot batch the two."""
    app = SpecApp(setup, session=FakeSession(spec=setup.spec, round_s=0.5))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.chat_screen
        redraws = []
        refresh_panel = screen.refresh_panel

        def recording():
            refresh_panel()
            turn = app.controller.conversation.turn
            started = turn is not None and any(isinstance(e, TurnStart) for e in turn.events)
            redraws.append((started, len(turn.rounds) if turn else 0))

        screen.refresh_panel = recording
        screen.refresh_panel()
        await send(pilot, app, SHORT)
        await until(pilot, lambda: rounds_so_far(app) >= 1)
        assert (True, 0) in redraws, redraws
        await pilot.press("escape")  # the answer stops after this round, not 12 rounds on
        await until(pilot, lambda: not app.controller.state.generating)


@sync
async def test_a_late_memory_reading_or_status_while_the_app_closes_is_ignored(fake, setup, monkeypatch):
    """The app's widgets go before the messages still queued for it: a memory reading (every
    2 s) or a loading status arriving then raised NoMatches, a traceback on quitting."""
    monkeypatch.setattr(SpecApp, "_measure_memory", lambda self: None)  # only the reading below
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.chat_screen
        for widget in (screen.query_one(StatsPanel), screen.query_one(StatusStrip), screen.query_one("#status")):
            await widget.remove()
        app.post_message(MemoryMeasured("GPU: none (CPU)\nRSS 9 MiB"))
        app.post_message(SessionLoading("loading"))
        await pilot.pause()
        assert app.controller.state.memory.endswith("RSS 9 MiB")  # taken in, with nothing left to show it on
        assert app.return_code is None  # no error ended the app (run_test would raise it on leaving)


@sync
async def test_regenerate_export_and_new_chat(fake, setup, dirs):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        first_id = app.controller.state.chat.id

        await pilot.press("ctrl+r")
        await answered(pilot, app)
        assert [m.role for m in app.controller.state.chat.messages] == ["user", "assistant"]
        assert len(app.query(AssistantMessage)) == 1 and app.controller.state.chat.messages[-1].content

        await pilot.press("ctrl+s")
        exported = dirs / f"spectui-chat-{first_id}.md"
        assert exported.exists()
        assert app.controller.state.chat.messages[-1].content.strip().splitlines()[0] in exported.read_text()

        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.controller.state.chat.id != first_id and not app.controller.state.chat.messages
        assert not app.query(AssistantMessage) and app.query("#welcome")
        assert first_id in [c.id for c in chat_store.list_chats()[0]]


@sync
async def test_every_answer_is_generated_on_one_thread(fake, setup, monkeypatch):
    """Once two threads have run llama.cpp's OpenMP work, libgomp throttles every wait of
    both (engine/llama_thread.py): chat answers, a regenerate, the A/B view and `spectui run`
    all generate on the same thread, whatever Textual worker thread asked for it."""
    threads = []
    generate = fake.generate

    def recording(*args, **kwargs):
        threads.append(threading.current_thread())
        yield from generate(*args, **kwargs)

    monkeypatch.setattr(fake, "generate", recording)
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(140, 44)) as pilot:
        for _ in range(2):
            await send(pilot, app, SHORT)
            await answered(pilot, app)
        await pilot.press("ctrl+r")
        await answered(pilot, app)
        await pilot.press("f2")
        screen = app.screen
        await run_ab(pilot, screen, SHORT)
        await until(pilot, lambda: screen.panes[1].turn is not None and not screen.running)
    generate_in_thread(fake, lambda event: None, messages=[{"role": "user", "content": SHORT}])
    assert len(threads) == 6 and len(set(threads)) == 1
    assert threads[0] is not threading.main_thread() and threads[0].is_alive()


def test_a_failing_caller_stops_the_answer_on_the_llama_thread(slow_fake):
    """When `spectui run`'s printing fails (a closed pipe), the answer stops after its round
    instead of going on to its end on the llama thread, which the exit then waits for."""

    def broken(event):
        raise BrokenPipeError

    with pytest.raises(BrokenPipeError):
        generate_in_thread(slow_fake, broken, messages=[{"role": "user", "content": SHORT}])
    t0 = time.monotonic()
    llama_thread.submit(lambda: None).result(timeout=30)
    assert time.monotonic() - t0 < 0.5  # a round is 0.1 s; the whole recording, seconds


# --- saved chats, views, copy, export -------------------------------------------------


@sync
@pytest.mark.model
async def test_speedup_against_a_none_baseline(fresh, setup):
    app = SpecApp(setup, session=fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.switcher.set_spec_type("none")
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        assert (
            app.controller.conversation.panel_state().baseline.tok_s
            == app.controller.state.chat.messages[-1].stats["tok_per_s"]
        )
        assert "baseline turn" in app.query_one("#stats").visual.plain
        app.controller.switcher.set_spec_type("draft-simple")
        await send(pilot, app, "And one that multiplies them.")
        await answered(pilot, app)
        assert "1 none answer: noise unknown" in app.query_one("#stats").visual.plain


@sync
async def test_resumed_chat_views_copy_and_export(fake, setup, dirs):
    chat = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.latest_chat())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        chunk = app.query_one(AnswerChunk)
        assert REJECTED_TEXT in chunk.render().plain
        assert "$spec-rejected dim strike" in {str(s.style) for s in chunk.render().spans}

        await pilot.press("ctrl+f")  # rejected off: gone from the view, kept in the history
        assert REJECTED_TEXT not in app.query_one(AnswerChunk).render().plain
        assert settings.load_settings()[0].show_rejected is False
        await pilot.press("ctrl+f")

        await pilot.press("ctrl+o")  # overlay off: Markdown with a code block
        await pilot.pause()
        markdown = app.query_one(AssistantMessage).query_one(Markdown)
        assert markdown.display and "print('hello')" in markdown.source
        assert REJECTED_TEXT not in markdown.source
        await pilot.press("ctrl+o")
        await pilot.pause()

        await app.run_action("copy_answer", app.chat_screen)
        assert app.clipboard == chat.messages[-1].content
        await pilot.pause()
        assert any(n.message.startswith("Sent the last answer") and "OSC 52" in n.message for n in notices(app))

        await pilot.press("ctrl+s")
        text = (dirs / f"spectui-chat-{chat.id}.md").read_text()
        assert "print('hello')" in text and REJECTED_TEXT not in text


@sync
async def test_chat_list_reopens_a_saved_chat(fake, setup):
    chat = fixed_chat()
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.controller.state.chat.messages
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: app.controller.state.chat.id == chat.id)
        await until(pilot, lambda: len(app.query(AssistantMessage)) == 1)


@sync
async def test_palette_runs_commands(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Spec type: ngram-mod":
            await pilot.press(ch if ch != " " else "space")
        await until(pilot, lambda: palette_offers(app, "Spec type: ngram-mod"))
        await pilot.press("enter")
        await until(pilot, lambda: fake.spec.label == "ngram-mod")


@sync
async def test_n_max_stays_between_1_and_64(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*["ctrl+down"] * 5)
        assert fake.spec.draft_n_max == 1
        app.controller.switcher.configure(fake.spec.replace(draft_n_max=63))
        await pilot.press("ctrl+up", "ctrl+up")
        assert fake.spec.draft_n_max == 64


async def cycle_types(pilot, session) -> list[tuple]:
    """Press the spec-type key once per choice; the types it went through."""
    seen = []
    for _ in session.choices():
        await pilot.press("ctrl+t")
        seen.append(session.spec.types)
    return seen


@sync
async def test_spec_types_cycle_through_the_available_ones(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = await cycle_types(pilot, fake)
        assert sorted(seen) == sorted(fake.choices())
        assert seen[-1] == (Spec.DRAFT_SIMPLE,)


@sync
@pytest.mark.model
async def test_a_hidden_state_draft_is_offered_and_drafts_in_the_chat(synthetic, setup):
    """The keys offer what the loaded models allow: with an EAGLE-3 head, draft-eagle3, not draft-simple."""
    session = Session(
        Model(synthetic("target")),
        Model(synthetic("eagle3")),
        setup.ctx_params(),
        spec=SpecConfig(types=("ngram-simple",)),
        sampling=setup.sampling(),
        owns_models=True,
    )
    app = SpecApp(setup, session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = await cycle_types(pilot, session)
        assert (Spec.DRAFT_EAGLE3,) in seen and (Spec.DRAFT_SIMPLE,) not in seen
        while session.spec.label != "draft-eagle3":
            await pilot.press("ctrl+t")
        await send(pilot, app, "the quick brown fox jumps over the lazy dog. the quick brown fox")
        await answered(pilot, app)
        assert (
            "draft-eagle3" in {r.spec_type for r in app.controller.conversation.turn.rounds} <= {"draft-eagle3", None}
        )
        assert "draft" in {kind for _, kind in app.controller.state.chat.messages[-1].segments}
    session.close()


@sync
async def test_help_screen_lists_every_command(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")  # on an empty input: help, not a "?"
        assert isinstance(app.screen, HelpScreen)
        labels = " ".join(str(label.visual) for label in app.screen.query("Label"))
        for c in COMMANDS:
            assert c.title in labels
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        app.query_one(ChatInput).insert("why")
        await pilot.press("question_mark")
        assert app.query_one(ChatInput).text == "why?"


def test_help_says_where_inspect_starts_on_as_the_chat_does(setup):
    from tests.chat.fake_screen import make

    help_text = next(c.help for c in COMMANDS if c.action == "toggle_inspect")
    assert "off by default" not in help_text
    for gpu, claim in ((False, "on by default where llama.cpp runs on the CPU"), (True, "off with a GPU build")):
        controller, _ = make(setup, None)
        controller.session_loaded(FakeSession(spec=setup.spec), setup, {"llama_cpp": {"gpu_offload": gpu}})
        assert claim in help_text and controller.switcher.inspect == claim.startswith("on")


@sync
async def test_newline_key_enter_sends_and_markdown_streams(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+o")  # overlay off: the answer streams as Markdown
        box = app.query_one(ChatInput)
        box.insert("Write a python function that adds two numbers.")
        await pilot.press("ctrl+j")
        box.insert("Use type hints.")
        assert box.text.endswith("numbers.\nUse type hints.")
        await pilot.press("enter")
        await answered(pilot, app)
        assert app.controller.state.chat.messages[0].content.endswith("numbers.\nUse type hints.") and box.text == ""
        await pilot.pause()
        markdown = app.query_one(AssistantMessage).query_one(Markdown)
        assert markdown.display and markdown.source == app.controller.state.chat.messages[-1].content


@sync
async def test_theme_persists_and_broken_theme_files_notify(fake, setup, dirs):
    themes = dirs / "config" / "themes"
    themes.mkdir(parents=True)
    (themes / "broken.toml").write_text("name = 'broken'\nprimary = 'not a colour'\n")
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        assert any("broken.toml" in n.message for n in notices(app))
        assert app.theme == "spectui-dark"
        await pilot.press("f8")
        chosen = app.theme
        assert chosen != "spectui-dark"
    assert settings.load_settings()[0].theme == chosen
    again = SpecApp(setup, session=fake)
    async with again.run_test(size=(120, 40)):
        assert again.theme == chosen


@sync
async def test_save_preset_from_the_app(fake, setup):
    from spectui.config import presets

    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+up")
        await pilot.press("f4")
        await pilot.pause()
        for ch in "mine":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.pause()
    saved = presets.load("mine")
    assert saved.values["spec_draft_n_max"] == 4 and saved.values["spec_type"] == "draft-simple"


@sync
async def test_a_bad_preset_name_keeps_the_dialog_open_and_says_why(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, NameScreen))
        await pilot.press(*".hidden", "enter")
        why = app.screen.query_one("#why", Label)
        await until(pilot, lambda: "invalid preset name '.hidden'" in str(why.render()))
        assert isinstance(app.screen, NameScreen)  # still open, to correct the name
        app.screen.query_one(Input).value = "fine"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, NameScreen))
    assert presets.load("fine").name == "fine"


@sync
@pytest.mark.model
async def test_loads_models_in_a_worker_and_reports_failures(setup, tmp_path):
    app = SpecApp(setup)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.controller.state.session is None
        await until(pilot, lambda: app.controller.state.session is not None, timeout=120)
        await until(pilot, lambda: app.chat_screen.title.startswith("draft-simple · n-max 3"))  # drawn after
        app.controller.state.session.close()

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    broken = replace(setup, preset="broken", model=str(bad), model_draft=None)
    app = SpecApp(broken)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat_screen.sub_title == "no model loaded")
        # the status line's message follows the header's: wait for it as well
        await until(pilot, lambda: "GGUF" in app.query_one("#status").visual.plain)
        await send(pilot, app, "hello")  # refused politely, nothing crashes
        assert not app.controller.state.chat.messages


@sync
@pytest.mark.model
async def test_preset_switch_reloads_in_a_worker_and_keeps_sampling_flags(fresh, setup):
    app = SpecApp(resolved(chat_args("-n", "7", "--spec-type", "ngram-mod")), session=fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.switcher.load_preset("no-such-preset")  # resolved first: an error leaves the session alone
        await pilot.pause()
        assert app.controller.state.session is fresh
        assert any("no-such-preset" in n.message for n in notices(app))
        app.controller.switcher.load_preset("smollm2")
        await until(
            pilot,
            lambda: app.controller.state.session is not None and app.controller.state.session is not fresh,
            timeout=120,
        )
        assert (
            app.controller.state.setup.n_predict == 7 and app.controller.state.setup.temp == 0
        )  # kept from the command line
        assert app.controller.state.session.spec.label == "draft-simple"  # the preset's, not the flag's
        # the notes and the title travel as messages after the session is set: wait for them
        await until(pilot, lambda: any(n.message.startswith("Preset smollm2: ") for n in notices(app)))
        await until(pilot, lambda: app.chat_screen.title.startswith("draft-simple"))
        app.controller.switcher.close()


def test_chat_command_resumes_the_latest_chat(monkeypatch):
    from spectui.cli import chat as chat_command
    from spectui.plan import memory_projection

    chat = fixed_chat()
    started = []
    monkeypatch.setattr(SpecApp, "run", lambda self: started.append(self))
    monkeypatch.setattr(chat_command, "has_terminal", lambda: True)
    monkeypatch.setattr(memory_projection, "for_setup", lambda *a: (None, "not projected here"))  # a no_alloc load
    assert chat_command.main(chat_args("--resume")) == 0
    assert started[0].controller.state.chat.id == chat.id and started[0].controller.state.setup.preset == "smollm2"


# --- pure helpers -----------------------------------------------------------------------


# the rounds of these tests: draft-simple's, one token each unless `pieces` says, timed
rnd = partial(a_round, pieces=("a",), t_draft=0.01, t_verify=0.02)


def test_live_turn_builds_the_message():
    turn = LiveTurn(SpecConfig(types=("draft-simple",)))
    assert turn.message.stopped  # a crash before the end leaves it marked
    assert turn.add(TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={})) == Growth()
    first = turn.extend(
        [PromptDone(t=0.1, t_prompt=0.1), rnd(3, 1, index=0, t=0.2, pieces=("he", "llo"), rejected_text="xx")]
    )
    assert first == Growth((("he", "draft"), ("xx", REJECTED), ("llo", "target")), "hello")
    turn.add(rnd(3, 3, index=1, t=0.3, configured=(Spec.NGRAM_MOD,), n_max=4, pieces=(" wo", "r", "l", "d")))
    end = turn.add(TurnEnd(t=0.4, stop_reason=StopReason.EOS, text="hello world!", n_generated=6))
    assert end == Growth((("!", "target"),), "!")  # the detokenizer's final flush, for the widget too
    m = turn.message
    assert m.content == "hello world!" and not m.stopped
    assert m.segments == [("he", "draft"), ("xx", REJECTED), ("llo", "target"), (" worl", "draft"), ("d!", "target")]
    assert m.config is not None and m.config.label == "draft-simple n-max 3 → ngram-mod"
    assert (m.config.spec_types, m.config.draft_n_max, m.config.spec_changes) == (
        ("draft-simple",),
        3,
        ((("ngram-mod",), 4),),
    )
    assert m.stats["n_generated"] == 6


def test_event_batcher_coalesces_rounds_but_not_turn_boundaries():
    posted, now = [], [0.0]
    b = EventBatcher(posted.append, interval=0.05, clock=lambda: now[0])
    b.add(TurnStart(t=0, n_prompt=1, n_prompt_decoded=1, n_ctx=10, config={}))
    assert len(posted) == 1
    now[0] = 0.2  # the prompt took longer than an interval: still not handed over alone
    b.add(PromptDone(t=0.2, t_prompt=0.2))
    assert len(posted) == 1
    for i in range(10):
        now[0] += 0.01
        b.add(rnd(1, 1, index=i, t=now[0]))
    b.add(TurnEnd(t=1, stop_reason=StopReason.EOS, text="", n_generated=0))
    assert sum(len(p) for p in posted) == 13
    assert isinstance(posted[1][0], PromptDone) and isinstance(posted[1][1], Round)  # with the first rounds
    assert 3 <= len(posted) <= 5 and isinstance(posted[-1][-1], TurnEnd)


def test_the_handover_batches_rounds_but_not_turn_boundaries():
    """Rounds and the end of the prompt wait for the consumer's interval; a turn's start and
    end wake it at once; after the close, the rest, then None."""
    h = Handover()
    t0 = time.monotonic()
    h.put(TurnStart(t=0, n_prompt=1, n_prompt_decoded=1, n_ctx=10, config={}))
    assert [type(e) for e in h.take(30)] == [TurnStart]
    assert time.monotonic() - t0 < 10  # woken, not after the interval
    h.put(PromptDone(t=0.2, t_prompt=0.2))
    for i in range(10):
        h.put(rnd(1, 1, index=i, t=i))
    t1 = time.monotonic()
    assert [type(e) for e in h.take(0.2)] == [PromptDone] + [Round] * 10
    assert time.monotonic() - t1 >= 0.15  # they did not wake it
    h.put(rnd(1, 1, index=11, t=11))
    h.put(TurnEnd(t=1, stop_reason=StopReason.EOS, text="", n_generated=0))
    h.close()
    t2 = time.monotonic()
    assert [type(e) for e in h.take(30)] == [Round, TurnEnd]
    assert h.take(30) is None and h.take(30) is None
    assert time.monotonic() - t2 < 10
    h, t3 = Handover(), time.monotonic()
    threading.Timer(0.1, h.close).start()  # a generation that failed before its end
    assert h.take(30) is None and time.monotonic() - t3 < 10


def test_the_answer_redraws_less_often_when_llama_cpp_takes_every_core():
    status = FakeSession().status()
    assert update_interval(status) == 1 / RATE
    assert update_interval(replace(status, cpu_bound=True)) == 1 / RATE_CPU_BOUND > 1 / RATE


def test_segments_slice_and_split_at_newlines():
    segs = [("ab\n", "draft"), ("cd", REJECTED), ("e\nf", "target")]
    assert slice_segments(segs, 1, 6) == [("b\n", "draft"), ("cd", REJECTED), ("e", "target")]
    assert slice_segments(segs, 5) == [("e\nf", "target")]
    assert split_point(segs, 100) is None
    assert split_point(segs, 4) == 2  # the last newline before the limit
    assert split_point(segs, 6) == 6  # or the first one after it
    assert split_point([("abc", "draft"), ("\n", REJECTED), ("defgh", "target")], 4) is None
    long = [("x" * CHUNK_CHARS + "\n", "draft"), ("tail", "target")]
    assert split_point(long, CHUNK_CHARS) == CHUNK_CHARS


def test_selection_copies_without_rejected_text():
    segs = [("keep ", "draft"), ("DROP", REJECTED), ("this\nand that", "target")]
    everything = Selection(None, None)
    assert selected_answer(segs, True, everything) == "keep this\nand that"
    assert selected_answer(segs, True, Selection(Offset(2, 0), Offset(3, 1))) == "ep this\nand"
    assert shown_content(visible(segs, False)).plain == "keep this\nand that"


def test_panel_text_and_sparkline_marks_config_changes():
    from spectui.spec_config import SpecConfig

    events = [TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={}), PromptDone(t=0.5, t_prompt=0.5)]
    events += [
        rnd(3, i % 4, index=i, t=0.5 + 0.1 * (i + 1), n_max=3 if i < 5 else 5, rejected_text="x" * (3 - i % 4))
        for i in range(10)
    ]
    lines = sparkline([e for e in events if isinstance(e, Round)], 20)
    assert len(lines) == 2 and lines[1].plain.index("▲") == 5
    assert rolling_tok_per_s(events) == pytest.approx(10 / 1.0)
    text = render(
        PanelState(
            spec=SpecConfig(types=("draft-simple",)),
            verify="greedy",
            events=events,
            baseline=Baseline(5.0, 0.1, 3),
            n_ctx=100,
            n_past=20,
            memory="GPU: none (CPU)\nRSS 1 MiB",
        )
    ).plain
    for expected in (
        "draft-simple",
        "last 10 rounds",
        "tok/s last 10",
        "mean acc. len",
        "#1",
        "×2.00",
        "none varied 10% over 3 answers",
        "20 / 100",
        "GPU: none (CPU)",
        "RSS 1 MiB",
        "rejected draft",
    ):
        assert expected in text
    assert max(len(line) for line in text.splitlines()) <= PanelState.width  # nothing wraps
    hint = render(PanelState(spec=SpecConfig(types=("draft-simple",)), verify="greedy", events=events)).plain
    assert "answer with none too (ctrl+t)" in hint  # read whole: "measure: none (ctrl+t), ask" looked cut


def test_a_speedup_is_shown_no_surer_than_its_data():
    within = Baseline(10.0, 0.08, 4)
    assert speedup_reading(13.0, 20, 50, within, replay=False) == ("×1.30 pays", "none varied 8% over 4 answers")
    assert speedup_reading(10.5, 20, 50, within, replay=False) == ("within noise", "×1.05, within none's 8%")
    assert speedup_reading(13.0, 20, 50, Baseline(10.0, None, 1), replay=False) == (
        "×1.30?",
        "1 none answer: noise unknown",
    )
    assert speedup_reading(13.0, 20, 0, within, replay=False) == ("-", "drafted nothing: no speedup")
    assert speedup_reading(None, 0, 0, within, replay=False) == ("-", "waiting for the first round")
    assert speedup_reading(13.0, 20, 50, None, replay=True) == ("-", "no none answer before this one")
    assert Baseline.of([9.0, 10.0, 11.0]) == Baseline(10.0, 0.2, 3) and Baseline.of([]) is None


def test_a_busier_machine_than_nones_gives_no_speedup_verdict():
    """none ran at 10 tok/s (0.1 s a step); this answer's rounds that drafted nothing took 0.3 s."""
    rounds = [a_round(t_verify=0.3), a_round(t_verify=0.25), a_round(3, 2, t_verify=0.4)]
    assert plain_step_s(rounds) == pytest.approx(0.275)
    busy = speedup_reading(0.6, 3, 3, Baseline(10.0, 0.08, 4), False, plain_step_s(rounds))
    assert busy == ("×0.06?", "busier machine: a plain step took ×2.8 none's")
    calm = speedup_reading(13.0, 3, 3, Baseline(10.0, 0.08, 4), False, 0.11)
    assert calm == ("×1.30 pays", "none varied 8% over 4 answers")
    assert plain_step_s([a_round(3, 2, t_verify=0.4)]) is None  # every round drafted: nothing to compare


def test_before_the_first_round_the_panel_claims_no_speedup():
    """A turn whose prompt is still being read has drafted nothing yet: that is no verdict."""
    events = [
        TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={}),
        PromptDone(t=0.5, t_prompt=0.5),
    ]
    state = PanelState(spec=SpecConfig(types=("draft-simple",)), verify="greedy", events=events)
    text = render(state).plain
    assert "waiting for the first round" in text and "drafted nothing" not in text
    state.events = [*events, rnd(0, 0, t=0.6)]
    assert "drafted nothing: no speedup" in render(state).plain


@pytest.mark.parametrize("types", [("none",), ("draft-simple",)])
def test_a_live_turns_panel_keeps_its_height_from_the_start(types):
    """Each change of the panel's height is a layout pass of the screen while the model needs
    the CPU: a live turn's panel has its first rounds' lines from its TurnStart on."""
    from spectui.spec_config import SpecConfig

    spec = SpecConfig(types=types)
    drafted = 3 if types != ("none",) else 0

    def one(i: int) -> Round:
        return rnd(drafted, min(i, drafted), by=types[0], index=i, t=0.6 + 0.1 * i)

    events = [TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={})]
    heights = []
    for more in ([], [PromptDone(t=0.5, t_prompt=0.5)], [one(0)], [one(i) for i in range(1, 9)]):
        events += more
        state = PanelState(spec=spec, verify="greedy", events=list(events), n_ctx=100, n_past=20, memory="RSS 1 MiB")
        heights.append(len(render(state).plain.splitlines()))
    assert len(set(heights)) == 1, heights


def test_with_the_overlay_off_a_long_code_line_wraps_and_loses_nothing():
    long_line = "area = rectangle_area(first_width_value, second_height_value) + " + "x" * 90 + "_END"
    text = f"Code:\n```python\n{long_line}\nprint(area)\n```\nafter"

    async def run():
        from textual.app import App
        from textual.widgets import Label
        from textual.widgets.markdown import MarkdownFence

        class Host(App):
            def get_theme_variable_defaults(self):  # as SpecApp provides them
                return {"spec-draft": "green"}

            def compose(self):
                yield AssistantMessage(chat_types.Message("assistant", text, segments=[(text, "target")]), False, True)

        async with Host().run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            fence = pilot.app.query_one(MarkdownFence)
            code = fence.query_one(Label)
            assert code.size.width <= fence.size.width < 80
            shown = "".join(strip.text for strip in code.render_lines(code.size.region))
            assert "".join(long_line.split()) in "".join(shown.split())

    asyncio.run(run())


def test_with_the_overlay_off_a_poems_lines_and_unfenced_codes_indentation_stay():
    """A chat answer is plain text as often as Markdown: its line breaks are kept, and code
    given without a fence keeps its indentation (docs/architecture.md)."""
    text = "Roses are red,\nviolets are blue.\n\nHere:\ndef reverse_string(s):\n    return s[::-1]"

    async def run():
        from textual.app import App
        from textual.widgets import Markdown

        class Host(App):
            def get_theme_variable_defaults(self):  # as SpecApp provides them
                return {"spec-draft": "green"}

            def compose(self):
                yield AssistantMessage(chat_types.Message("assistant", text, segments=[(text, "target")]), False, True)

        async with Host().run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            leaves = [w for w in pilot.app.query_one(Markdown).query("*") if not w.children]
            shown = [line.rstrip() for w in leaves for line in str(w.render()).split("\n")]
            assert "Roses are red," in shown and "violets are blue." in shown
            code = next(line for line in shown if "return s[::-1]" in line)
            head = next(line for line in shown if "def reverse_string(s):" in line)
            assert code.index("return") == head.index("def") + 4

    asyncio.run(run())


def test_chunking_bounds_the_streaming_redraw():
    long_answer = [(f"line {i}\n", "draft" if i % 2 else "target") for i in range(400)]

    async def run():
        from textual.app import App

        class Host(App):
            def get_theme_variable_defaults(self):  # as SpecApp provides them
                return {"spec-draft": "green"}

            def compose(self):
                yield AssistantMessage(chat_types.Message("assistant", "", segments=long_answer), True, True)

        async with Host().run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            chunks = pilot.app.query(AnswerChunk)
            assert len(chunks) > 1
            assert all(sum(len(t) for t, _ in c.segments) < 2 * CHUNK_CHARS for c in chunks)
            shown = "\n".join(shown_content(visible(c.segments, True)).plain for c in chunks)
            assert shown == "".join(t for t, _ in long_answer)

    asyncio.run(run())
