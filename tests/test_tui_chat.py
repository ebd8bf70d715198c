"""The chat as a daily user drives it, with Pilot: type-ahead, editing and resending, the
settings screen, switching models, the saved-chats picker, copying, resuming a chat with
its models and settings, Markdown in the overlay, narrow terminals and round details.

Most run on a FakeSession (a recorded answer); switching models and the engine's live
sampling change run on SmolLM2 (and Gemma 3 for the pair that does not fit).
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from textual.command import CommandPalette
from textual.widgets import DataTable, Input, Label, OptionList, Select, TextArea

from spectui.chat.starters import BY_KEY, STARTERS
from spectui.config import presets
from spectui.config.embedded import model_path
from spectui.config.recent import recent_models
from spectui.config.settings import Settings, load_settings
from spectui.engine.events import Round
from spectui.llama.sampling import SamplingParams
from spectui.store import chat_store, chat_types
from spectui.tui.app import SpecApp
from spectui.tui.screens.chats import ChatsScreen
from spectui.tui.screens.confirm import ConfirmScreen
from spectui.tui.screens.name import NameScreen
from spectui.tui.screens.rounds import RoundsScreen
from spectui.tui.screens.settings import SettingsScreen
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.markdown import last_code_block, render_markdown
from spectui.tui.widgets.message import AnswerChunk, AssistantMessage, UserMessage
from spectui.tui.widgets.overlay import selected_answer, shown_content, visible
from spectui.tui.widgets.queue import Outbox
from tests.fake_session import NAME, FakeSession, load_recording
from tests.textual_private import notices
from tests.tui_helpers import (
    LONG,
    SHORT,
    answered,
    burst,
    chat_args,
    fixed_chat,
    palette_offers,
    resolved,
    send,
    sync,
    until,
)

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs

SMOL = "smollm2-135m-instruct-q4_1"


def box(app: SpecApp) -> ChatInput:
    return app.query_one(ChatInput)


def roles(app: SpecApp) -> list[str]:
    return [m.role for m in app.controller.chat.messages]


# --- type-ahead and editing -----------------------------------------------------------


@sync
async def test_enter_while_streaming_queues_the_message_and_sends_it_after(slow_fake, setup):
    app = SpecApp(setup, session=slow_fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, LONG)
        await until(pilot, lambda: app.controller.generating)
        await send(pilot, app, "Second question")
        await send(pilot, app, "Third, to take back")
        outbox = app.query_one(Outbox)
        assert outbox.display and app.controller.queued == ["Second question", "Third, to take back"]
        assert "queued" in outbox.visual.plain and box(app).text == ""
        assert roles(app) == ["user", "assistant"]  # not sent yet
        await pilot.press("up")  # the last queued message comes back to be changed
        assert box(app).text == "Third, to take back" and app.controller.queued == ["Second question"]
        box(app).clear()
        slow_fake.round_s = 0.005  # queued mid-answer; the rest need not be slow

        await until(pilot, lambda: len(slow_fake.prompts) == 2)  # sent when the first answer ended
        assert slow_fake.prompts[1][-1] == {"role": "user", "content": "Second question"}
        await answered(pilot, app)
        assert roles(app) == ["user", "assistant"] * 2 and not outbox.display
        assert [w.message.content for w in app.query(UserMessage)] == [LONG, "Second question"]


@sync
async def test_keys_sent_at_once_are_edited_in_the_order_typed(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await burst(pilot, *"abc", "ctrl+j", *"def")
        assert box(app).text == "abc\ndef"
        await burst(pilot, "shift+enter", *"ghi", "backspace", "j", "left", "k")
        assert box(app).text == "abc\ndef\nghkj"


@sync
async def test_text_is_kept_while_the_models_load_and_sent_once_they_are_ready(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.loading = True  # as while a model switch runs
        await send(pilot, app, SHORT)
        assert app.controller.queued == [SHORT] and not fake.prompts
        app.controller.loading = False
        app.controller.send_queued()
        await answered(pilot, app)
        assert fake.prompts[0][-1]["content"] == SHORT


@sync
async def test_edit_the_last_message_and_resend_replaces_what_followed(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, "first")
        await answered(pilot, app)
        await send(pilot, app, "second")
        await answered(pilot, app)
        await pilot.press("up")
        assert box(app).text == "second" and "editing" in app.query_one("#status").visual.plain
        box(app).clear()
        box(app).insert("second, edited")
        await pilot.press("enter")
        await answered(pilot, app)
        messages = app.controller.chat.messages
        assert [m.content for m in messages if m.role == "user"] == ["first", "second, edited"]
        assert roles(app) == ["user", "assistant"] * 2
        assert len(app.query(UserMessage)) == 2 and len(app.query(AssistantMessage)) == 2
        assert fake.prompts[-1][-1]["content"] == "second, edited"
        assert [m.content for m in chat_store.load_chat(app.controller.chat.id).messages if m.role == "user"] == [
            "first",
            "second, edited",
        ]

        # an earlier message (the palette's "Edit an earlier message…"): the rest is replaced
        app.controller.edit(messages[0])
        await pilot.press("escape")  # cancels
        assert app.controller.editing is None and box(app).text == ""
        app.controller.edit(messages[0])
        await pilot.press("x", "enter")
        await answered(pilot, app)
        assert [m.content for m in app.controller.chat.messages if m.role == "user"] == ["firstx"]
        assert len(app.query(AssistantMessage)) == 1


# --- settings -------------------------------------------------------------------------


async def fill(pilot, screen: SettingsScreen, values: dict[str, str]) -> None:
    for name, text in values.items():
        widget = screen.query_one(f"#{name}")
        if isinstance(widget, Select):
            widget.value = text
        elif isinstance(widget, TextArea):
            widget.text = text
        else:
            widget.value = text
    await pilot.pause()


@sync
async def test_settings_screen_applies_from_the_next_turn_and_saves_into_a_preset(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f10")
        screen = app.screen
        assert isinstance(screen, SettingsScreen) and screen.query_one("#temp", Input).value == "0.0"
        await fill(pilot, screen, {"top_k": "many"})
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SettingsScreen)  # refused, with the reason, nothing applied
        assert "top-k must be a whole number, not 'many'" in screen.query_one("#error").visual.plain
        await fill(
            pilot,
            screen,
            {
                "top_k": "20",
                "temp": "0.7",
                "seed": "7",
                "n_predict": "12",
                "spec_draft_n_max": "5",
                "spec_draft_p_min": "0.5",
                "spec_verify": "rejection",
                "system": "Be brief.",
            },
        )
        await pilot.press("ctrl+s")
        assert not isinstance(app.screen, SettingsScreen)
        assert fake.sampling == SamplingParams(temp=0.7, top_k=20, top_p=setup.top_p, min_p=setup.min_p, seed=7)
        assert (fake.spec.draft_n_max, fake.spec.draft_p_min, fake.spec.verify) == (5, 0.5, "rejection")
        assert app.chat_screen.title == "draft-simple · n-max 5 · verify rejection"
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        assert fake.prompts[-1][0] == {"role": "system", "content": "Be brief."}

        await pilot.press("f4")
        await pilot.pause()
        await pilot.press(*"tuned", "enter")
        await pilot.pause()
    saved = presets.load("tuned").values
    assert (saved["temp"], saved["top_k"], saved["seed"], saved["n_predict"], saved["system"]) == (
        0.7,
        20,
        7,
        12,
        "Be brief.",
    )
    assert (saved["spec_draft_n_max"], saved["spec_draft_p_min"], saved["spec_verify"]) == (5, 0.5, "rejection")


@sync
async def test_palette_opens_the_settings_at_one_setting(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"Setting: min-p")
        await until(pilot, lambda: palette_offers(app, "Setting: min-p"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        await pilot.pause()
        assert app.focused is app.screen.query_one("#min_p")
        await pilot.press("escape")
        assert not isinstance(app.screen, SettingsScreen) and fake.sampling.min_p == setup.min_p


@sync
async def test_at_80_columns_every_settings_hint_is_whole(fake, setup):
    """The hints were cut with "…" at 80 columns ("0 turns it …"): they wrap instead."""
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        await pilot.pause()
        hints = app.screen.query(".about")
        assert len(hints) == 10
        for hint in hints:
            lines = hint.render_lines(hint.region.reset_offset)
            shown = " ".join("".join(seg.text for seg in line).strip() for line in lines).split()
            assert shown == str(hint.visual).split(), shown


# --- switching models -------------------------------------------------------------------


@sync
@pytest.mark.model
async def test_opening_a_model_reports_its_load_progress(setup):
    from spectui.launch.session import open_session

    seen: list[str] = []
    session = open_session(
        replace(setup, model_draft=None, spec=setup.spec.with_types("ngram-mod")), status=seen.append
    )
    session.close()
    assert seen[0] == "loading target SmolLM2-135M-Instruct.Q4_1.gguf"
    assert seen[-2:] == ["loading target SmolLM2-135M-Instruct.Q4_1.gguf 100%", "creating contexts"]


@sync
@pytest.mark.model
async def test_a_pair_that_does_not_fit_is_refused_and_the_old_pair_keeps_answering(fresh, setup):
    app = SpecApp(setup, session=fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.switch_models(SMOL, "gemma-3-270m-q4_k_m")
        assert app.controller.loading
        await until(pilot, lambda: not app.controller.loading, timeout=120)
        assert app.controller.session is fresh
        assert any("cannot draft for target" in n.message for n in notices(app))
        assert app.chat_screen.sub_title == "SmolLM2 135M Instruct Q4_1 ⇠ draft SmolLM2 135M Instruct Q4_1"
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        assert app.controller.chat.messages[-1].content


@sync
@pytest.mark.model
async def test_switch_models_from_the_picker_loads_in_the_background(fresh, setup):
    app = SpecApp(setup, session=fresh)
    gguf = str(model_path(SMOL))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_action("switch_models")
        await pilot.press(*"Another GGUF")
        await until(pilot, lambda: palette_offers(app, "Another GGUF"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, NameScreen))
        app.screen.query_one(Input).value = gguf
        await pilot.press("enter")  # the target; then the draft picker
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))  # the draft picker
        await pilot.press(*"No draft model")
        await until(pilot, lambda: palette_offers(app, "No draft model"))
        await pilot.press("enter")
        await until(
            pilot, lambda: app.controller.session is not fresh and app.controller.session is not None, timeout=120
        )
        status = app.controller.session.status()
        assert status.draft is None and app.controller.setup.model == gguf and app.controller.setup.model_draft is None
        assert app.controller.session.spec.label == "ngram-mod"  # draft-simple needs a draft: said in a note
        assert any("speculating with ngram-mod" in n.message for n in notices(app))
        assert app.chat_screen.sub_title == "SmolLM2 135M Instruct Q4_1 (no draft model)"
        assert recent_models() == [gguf]
        app.controller.close()


@sync
async def test_another_file_that_is_not_a_gguf_is_refused_as_it_is_entered(fake, setup, tmp_path):
    """/etc/passwd was taken, and failed only once a draft was picked, as `bad magic b'root'`."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        app._ask_file(lambda path: pytest.fail(f"{path} was taken as a model"))
        await until(pilot, lambda: isinstance(app.screen, NameScreen) and app.screen.query(Input))
        app.screen.query_one(Input).value = str(passwd)
        await pilot.press("enter")
        await until(pilot, lambda: any("not a GGUF" in n.message for n in notices(app)))
        [said] = [n.message for n in notices(app) if "not a GGUF" in n.message]
        assert said == f"{passwd} is not a GGUF file (it does not start with GGUF)"
        assert not isinstance(app.screen, CommandPalette) and app.controller.session is fake


# --- saved chats: picker, resume, copy ------------------------------------------------------


@sync
async def test_rename_and_delete_chats_in_the_picker(fake, setup):
    other = fixed_chat()
    current = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(current.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, NameScreen))
        app.screen.query_one(Input).value = "Renamed"
        await pilot.press("enter")
        await pilot.pause()
        assert chat_store.load_chat(current.id).title == "Renamed"  # the open chat is highlighted first
        assert chat_store.load_chat(other.id).title != "Renamed"
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Delete “Renamed”?" in str(app.screen.query_one(Label).content)  # it names the chat
        await pilot.press("d")  # any key but y keeps it
        assert isinstance(app.screen, ChatsScreen) and len(chat_store.list_chats()[0]) == 2
        await pilot.press("d", "y")
        await pilot.pause()
        assert [c.id for c in chat_store.list_chats()[0]] == [other.id]
        await pilot.press("escape")
        await pilot.pause()
        assert app.controller.chat.id != current.id and not app.controller.chat.messages  # a new chat


@sync
async def test_the_picker_searches_every_chats_words(fake, setup):
    rockets = chat_types.new_chat()
    rockets.messages = [
        chat_types.Message("user", "Tell me"),
        chat_types.Message("assistant", "Rockets push on exhaust."),
    ]
    chat_store.save_chat(rockets)
    chat_store.save_chat(fixed_chat())
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
        options = app.screen.query_one(OptionList)
        assert options.option_count == 2
        await pilot.press("slash", *"exhaust")
        await pilot.pause()
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [rockets.id]
        await pilot.press("enter", "enter")  # to the list, then open the one found
        await pilot.pause()
        assert app.controller.chat.id == rockets.id
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
        await pilot.press("ctrl+f", *"nowhere")
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        assert options.get_option_at_index(0).disabled and "No chat holds" in str(options.get_option_at_index(0).prompt)
        await pilot.press("escape")  # leaves the search: every chat again
        await pilot.pause()
        assert isinstance(app.screen, ChatsScreen) and options.option_count == 2


@sync
async def test_letters_typed_in_the_search_never_act_on_the_list(fake, setup):
    chat = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(chat.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
        screen = app.screen
        await burst(pilot, "slash", "x", "backspace", *"ddr")  # the query empties on the way
        await pilot.pause()
        assert app.screen is screen and screen.query_one(Input).value == "ddr"
        [stored] = chat_store.list_chats()[0]  # nothing deleted or renamed
        assert stored.id == chat.id and stored.title == chat.title
        assert not screen.picked.deleted and not screen.picked.renamed
        await pilot.press(*["backspace"] * 3, "down", "d")  # ↓ hands the keys to the list: d asks
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await pilot.pause()
        assert chat_store.list_chats()[0] == [] and screen.picked.deleted == {chat.id}


@sync
async def test_renaming_the_open_chat_survives_its_next_save(fake, setup):
    chat = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(chat.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, NameScreen))
        app.screen.query_one(Input).value = "My name"
        await pilot.press("enter", "escape")
        await pilot.pause()
        await send(pilot, app, SHORT)
        await answered(pilot, app)
    assert chat_store.load_chat(chat.id).title == "My name"


@sync
async def test_copy_the_last_answer_or_its_code_block(fake, setup):
    chat = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(chat.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("shift+f12")
        assert app.clipboard == "print('hello')"
        await pilot.press("f12")
        assert app.clipboard == chat.messages[-1].content and "ZZREJECTEDZZ" not in app.clipboard


def saved_with_setup(**setup_values) -> chat_types.Chat:
    chat = fixed_chat()
    chat.setup = resolved(chat_args()).values() | setup_values
    chat_store.save_chat(chat)
    return chat


def test_resume_restores_the_chats_models_and_settings(monkeypatch, capsys):
    from spectui.cli import chat as chat_command
    from spectui.plan import memory_projection

    monkeypatch.setattr(memory_projection, "for_setup", lambda *a: (None, "not projected here"))  # a no_alloc load

    saved_with_setup(spec_type="ngram-mod", spec_draft_n_max=6, system="Be terse.", temp=0.9)
    started = []
    monkeypatch.setattr(SpecApp, "run", lambda self: started.append(self))
    monkeypatch.setattr(chat_command, "has_terminal", lambda: True)
    assert chat_command.main(chat_args("--resume")) == 0
    setup = started[0].controller.setup
    assert (setup.spec.label, setup.spec.draft_n_max, setup.system, setup.model) == ("ngram-mod", 6, "Be terse.", SMOL)
    assert setup.temp == 0  # a flag given now wins over the chat's

    saved_with_setup(model="/gone/model.gguf", model_draft=None, temp=0.9)
    assert chat_command.main(chat_args("--resume")) == 0
    assert started[1].controller.setup.model == SMOL
    assert "/gone/model.gguf, which is gone; keeping smollm2" in capsys.readouterr().err


@sync
async def test_opening_a_chat_restores_its_settings_or_says_its_models_are_gone(fake, setup):
    chat = saved_with_setup(spec_type="ngram-mod", temp=0.5, n_predict=9)
    gone = saved_with_setup(model="/gone/model.gguf")
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.open_chat(chat.id)
        await until(pilot, lambda: fake.spec.label == "ngram-mod")
        assert fake.sampling.temp == 0.5 and app.controller.setup.n_predict == 9 and not app.controller.loading
        app.controller.open_chat(gone.id)
        await until(pilot, lambda: app.controller.chat.id == gone.id)
        await until(pilot, lambda: any("which is gone" in n.message for n in notices(app)))
        assert app.controller.session is fake and not app.controller.loading


@sync
async def test_an_empty_chat_offers_three_starters_one_key_each(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        cells = [str(c.visual) for c in app.query("#starters Static")]
        assert cells == [part for s in STARTERS for part in (f" {s.key}", f"{s.title}: watch {s.watch}")]
        await pilot.press("2")
        await answered(pilot, app)
        assert app.controller.chat.messages[0].content == BY_KEY["2"].prompt
        await pilot.press("3")  # the chat is no longer empty: a digit is text
        assert app.query_one(ChatInput).text == "3"


@sync
async def test_a_starters_wrapped_lines_hang_under_its_text_not_its_key(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        cells = list(app.query("#starters Static"))
        assert len(cells) == 2 * len(STARTERS)
        for key, text in zip(cells[::2], cells[1::2]):
            assert text.region.height >= 2  # wrapped at 80 columns
            assert text.region.x >= key.region.right and text.region.y == key.region.y
            assert text.region.x == cells[1].region.x  # every starter's text in one column


# --- the overlay, narrow terminals, the header, the panel, round details ------------------


def test_markdown_in_the_overlay_keeps_the_colours_and_the_text():
    segments = [
        ("## Steps\n", "draft"),
        ("- one **two**\n", "target"),
        ("ZZ", "rejected"),
        ("```py\n", "ngram"),
        ("x = 1\n", "draft"),
        ("```\n", "target"),
        ("Use `x`.", "draft"),
    ]
    overlay = shown_content(visible(segments, True))
    shown = render_markdown(segments)
    # the fence is found in the answer's text; the rejected draft before it ends the line above
    assert shown.plain.split("\n") == ["## Steps", "• one **two**ZZ", "╭──py", "x = 1", "╰──", "Use `x`."]
    assert len(shown.plain) == len(overlay.plain)  # character for character
    assert "ZZ" not in render_markdown(segments, show_rejected=False).plain

    def styles_at(i: int) -> set[str]:
        return {str(s.style) for s in shown.spans if s.start <= i < s.end}

    code = shown.plain.index("x = 1")
    assert {"$spec-draft", "on $boost"} <= styles_at(code)  # the token colour and the code block
    title = shown.plain.index("Steps")
    assert {"$spec-draft", "bold"} <= styles_at(title)
    assert "bold" in styles_at(shown.plain.index("two"))
    assert last_code_block("".join(t for t, k in segments if k != "rejected")) == "x = 1"
    # a chunk that starts inside a code block opened by an earlier one
    assert "on $boost" in {str(s.style) for s in render_markdown([("y = 2", "draft")], in_code=True).spans}


@sync
async def test_the_overlay_renders_code_fences_in_the_app(fake, setup):
    fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.latest_chat())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        chunk = app.query_one(AnswerChunk)
        rendered = chunk.render()
        assert "```" not in rendered.plain and "╭──python" in rendered.plain
        from textual.selection import Selection

        assert selected_answer(chunk.segments, True, Selection(None, None)).count("```") == 2


@sync
async def test_narrow_terminal_shows_the_panel_as_a_status_line(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        await pilot.pause()
        panel, strip = app.query_one("#panel"), app.query_one("#compact")
        assert not panel.display and strip.display
        text = strip.visual.plain
        assert "draft-simple" in text and "tok/s" in text and "acc" in text and "ctx" in text
        await pilot.press("ctrl+b")
        assert not strip.display
        await pilot.press("ctrl+b")
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert panel.display and not strip.display
        assert "This turn" in app.query_one("#stats").visual.plain


@sync
async def test_ctrl_b_at_one_width_never_hides_the_panel_of_the_other(fake, setup):
    """The strip hidden at 80 columns leaves the panel of 120 on, then and at the next start;
    the panel hidden at 120 leaves the strip on."""
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+b")
        panel, strip = app.query_one("#panel"), app.query_one("#compact")
        assert not strip.display and not panel.display
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert panel.display and not strip.display
    assert load_settings()[0] == Settings(show_strip=False)  # remembered, the panel's choice apart
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        panel, strip = app.query_one("#panel"), app.query_one("#compact")
        assert panel.display
        await pilot.press("ctrl+b")
        assert not panel.display
        await pilot.press("ctrl+b")
        assert panel.display
        await pilot.press("ctrl+b")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not strip.display  # its own choice, made before
        await pilot.press("ctrl+b")
        assert strip.display
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not panel.display
    assert load_settings()[0] == Settings(show_panel=False)


@sync
async def test_header_names_models_cleanly_and_context_follows_the_chat(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        assert NAME not in app.chat_screen.sub_title
        assert app.chat_screen.sub_title == "SmolLM2-135M-Instruct.Q4_1 ⇠ draft SmolLM2-135M-Instruct.Q4_1"
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        used = app.controller.turn.rounds[-1].n_past
        assert f"{used} / 4096" in app.query_one("#stats").visual.plain
        fake._n_past = 3  # what the A/B view leaves in the cache
        await pilot.press("f1", "escape")
        assert f"{used} / 4096" in app.query_one("#stats").visual.plain
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert " 0 / 4096" in app.query_one("#stats").visual.plain


@sync
async def test_round_details_show_each_round_and_autos_reason(setup):
    events = load_recording()
    last = max(i for i, e in enumerate(events) if isinstance(e, Round))
    events[last] = replace(events[last], note="auto: ngram-mod k=4, cheap and accepted")
    app = SpecApp(setup, session=FakeSession(events, spec=setup.spec))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f11")
        assert not isinstance(app.screen, RoundsScreen)  # no answer yet: said so
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        rounds = app.controller.turn.rounds
        await pilot.press("f11")
        assert isinstance(app.screen, RoundsScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(rounds)
        last = table.get_row_at(table.row_count - 1)
        assert last[-1] == "auto: ngram-mod k=4, cheap and accepted" and last[2] == rounds[-1].n_drafted
        await pilot.press("escape")
        assert not isinstance(app.screen, RoundsScreen)


def detail_text(widget) -> str:
    """What a widget with a top border shows, its wrapped lines joined again."""
    return " ".join(strip.text.strip() for strip in widget.render_lines(widget.outer_size.region)[1:])


@sync
async def test_round_details_fit_80_columns_step_a_column_at_a_time_and_say_the_round_whole(setup):
    """At 80x24 every count and timing shows; the rejected text (newlines as the overlay's ↵)
    and auto's note follow: → moves the view one column (the round's number stays), and the
    line under the table says the highlighted round whole, its note uncut; the hint wraps."""
    from tests.tui.test_tui_snapshots import ANSWER_ROUNDS, recorded

    answer = [*ANSWER_ROUNDS, (["\n"], "x\ny", "z")]
    rounds = [e for e in recorded("ngram-map-k4v", answer, 20.0) if isinstance(e, Round)]
    note = "auto: ngram-map-k4v k=4, the last rounds accepted most of what it drafted, so it drafts on"
    rounds[-1] = replace(rounds[-1], note=note)
    app = SpecApp(setup, session=FakeSession(spec=setup.spec))
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(RoundsScreen(rounds, "auto"))
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        columns = [str(c.label) for c in table.ordered_columns]
        fixed = columns.index("tokens") + 1
        assert columns[fixed:] == ["rejected", "note"]
        widths = [c.get_render_width(table) for c in table.ordered_columns]
        assert sum(widths[:fixed]) <= table.scrollable_content_region.width
        assert [table.get_row_at(i)[fixed] for i in range(len(rounds))] == ["", " c", "", "", "x↵y"]
        shown = app.screen.query_one("#round-detail")
        said = detail_text(shown)
        assert "round 5: ngram-map-k4v drafted" in said and "'x↵y'" in said and note in said  # whole
        assert shown.region.right <= 80
        hint = app.screen.query_one(".hint")
        assert hint.region.height >= 2 and hint.region.right <= 80
        assert "esc closes" in "".join(strip.text for strip in hint.render_lines(hint.size.region))
        await pilot.press("right")  # past "drafted by": its width, not one cell
        assert table.scroll_x == widths[1] > 1
        await pilot.press("right", "left")
        assert table.scroll_x == widths[1]
        await pilot.press(*["right"] * len(columns))
        assert table.scroll_x == table.max_scroll_x > 0
        await pilot.press("up")
        said = detail_text(shown)
        assert said.startswith("round 4: ngram-map-k4v drafted") and "auto" not in said


@pytest.mark.parametrize(
    "name, text, says",
    [
        ("temp", "-5", "--temp must be 0 (greedy) or more"),
        ("spec_draft_n_max", "99", "--spec-draft-n-max must be between 0 and 64"),
        ("seed", "-2", "--seed must be 0 to 4294967295, or -1 for a random one"),
        ("top_k", "x", "top-k must be a whole number, not 'x'"),
    ],
)
def test_settings_are_checked_as_setup_checks_a_flag(name, text, says):
    from spectui.config.setup import Setup
    from spectui.errors import UserError
    from spectui.tui.screens.settings import checked

    with pytest.raises(UserError, match=re.escape(says)):
        checked(Setup(), {name: text})


def test_settings_accept_what_setup_accepts():
    from spectui.config.setup import Setup
    from spectui.tui.screens.settings import checked

    assert checked(Setup(), {"seed": "-1", "spec_draft_n_max": "0"}) == {"seed": -1, "spec_draft_n_max": 0}
    assert checked(Setup(), {"seed": " "}) == {"seed": None}  # none: random, as -1


@sync
async def test_the_settings_grey_what_an_ngram_type_does_not_use_and_take_seed_minus_1(setup):
    fake = FakeSession(spec=setup.spec.with_types("ngram-simple").replace(ngram_simple_size_n=3))
    app = SpecApp(replace(setup, seed=7), session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f10")
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        for name in ("spec_draft_n_max", "spec_draft_n_min", "spec_draft_p_min"):
            box = screen.query_one(f"#{name}", Input)
            about = box.parent.children[box.parent.children.index(box) + 1]
            assert box.disabled and "-unused" in about.classes
            assert str(about.visual) == "not used by ngram-simple: its sizes are size-n 3, size-m 48"
        assert screen.query_one("#seed", Input).value == "7"
        await fill(pilot, screen, {"seed": "-1"})
        await pilot.press("ctrl+s")
        assert not isinstance(app.screen, SettingsScreen)
        assert app.controller.setup.seed == -1 and fake.sampling.seed is None  # -1: random, as the flag says
        app.controller.state.setup = replace(app.controller.setup, seed=None)  # random, as none
        said = len(notices(app))
        await pilot.press("f10")
        assert app.screen.query_one("#seed", Input).value == "-1"
        await pilot.press("ctrl+s")  # unchanged as written: nothing to apply, nothing said
        assert not isinstance(app.screen, SettingsScreen) and len(notices(app)) == said
        assert app.controller.setup.seed is None
