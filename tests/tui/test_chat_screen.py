"""The chat screen as a daily user drives it, with Pilot on a FakeSession (a recorded answer):
type-ahead, editing and resending, the starters, copying, Markdown in the overlay, narrow
terminals and the panel, the header and round details."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import DataTable

from spectui.chat.starters import BY_KEY, STARTERS
from spectui.config.settings import Settings, load_settings
from spectui.engine.events import Round
from spectui.store import chat_store
from spectui.tui.app import SpecApp
from spectui.tui.screens.rounds import RoundsScreen
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.markdown import last_code_block, render_markdown
from spectui.tui.widgets.message import AnswerChunk, AssistantMessage, UserMessage
from spectui.tui.widgets.overlay import selected_answer, shown_content, visible
from spectui.tui.widgets.queue import Outbox
from tests.fake_session import NAME, FakeSession, load_recording
from tests.tui_helpers import LONG, SHORT, answered, burst, fixed_chat, send, sync, until


def box(app: SpecApp) -> ChatInput:
    return app.query_one(ChatInput)


def roles(app: SpecApp) -> list[str]:
    return [m.role for m in app.controller.state.chat.messages]


@sync
async def test_enter_while_streaming_queues_the_message_and_sends_it_after(slow_fake, setup):
    app = SpecApp(setup, session=slow_fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, LONG)
        await until(pilot, lambda: app.controller.state.generating)
        await send(pilot, app, "Second question")
        await send(pilot, app, "Third, to take back")
        outbox = app.query_one(Outbox)
        assert outbox.display and app.controller.conversation.queued == ["Second question", "Third, to take back"]
        assert "queued" in outbox.visual.plain and box(app).text == ""
        assert roles(app) == ["user", "assistant"]  # not sent yet
        await pilot.press("up")  # the last queued message comes back to be changed
        assert box(app).text == "Third, to take back" and app.controller.conversation.queued == ["Second question"]
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
        app.controller.state.loading = True  # as while a model switch runs
        await send(pilot, app, SHORT)
        assert app.controller.conversation.queued == [SHORT] and not fake.prompts
        app.controller.state.loading = False
        app.controller.conversation.send_queued()
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
        messages = app.controller.state.chat.messages
        assert [m.content for m in messages if m.role == "user"] == ["first", "second, edited"]
        assert roles(app) == ["user", "assistant"] * 2
        assert len(app.query(UserMessage)) == 2 and len(app.query(AssistantMessage)) == 2
        assert fake.prompts[-1][-1]["content"] == "second, edited"
        assert [m.content for m in chat_store.load_chat(app.controller.state.chat.id).messages if m.role == "user"] == [
            "first",
            "second, edited",
        ]

        # an earlier message (the palette's "Edit an earlier message…"): the rest is replaced
        app.controller.conversation.edit(messages[0])
        await pilot.press("escape")  # cancels
        assert app.controller.conversation.editing is None and box(app).text == ""
        app.controller.conversation.edit(messages[0])
        await pilot.press("x", "enter")
        await answered(pilot, app)
        assert [m.content for m in app.controller.state.chat.messages if m.role == "user"] == ["firstx"]
        assert len(app.query(AssistantMessage)) == 1


@sync
async def test_an_empty_chat_offers_three_starters_one_key_each(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        cells = [str(c.visual) for c in app.query("#starters Static")]
        assert cells == [part for s in STARTERS for part in (f" {s.key}", f"{s.title}: watch {s.watch}")]
        await pilot.press("2")
        await answered(pilot, app)
        assert app.controller.state.chat.messages[0].content == BY_KEY["2"].prompt
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


@sync
async def test_copy_the_last_answer_or_its_code_block(fake, setup):
    chat = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(chat.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("shift+f12")
        assert app.clipboard == "print('hello')"
        await pilot.press("f12")
        assert app.clipboard == chat.messages[-1].content and "ZZREJECTEDZZ" not in app.clipboard


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
        used = app.controller.conversation.turn.rounds[-1].n_past
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
        rounds = app.controller.conversation.turn.rounds
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
    from tests.helpers.events import ANSWER_ROUNDS, recorded

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
