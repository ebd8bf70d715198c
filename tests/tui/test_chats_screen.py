"""The saved chats with Pilot: the picker (ctrl+l) renames, deletes and searches through the chat
library, a rename of the open chat outlasts its next save; resuming a chat (--resume) or opening
one restores its models and settings, or says its models are gone."""

from __future__ import annotations

from textual.widgets import Input, Label, OptionList

from spectui.store import chat_store, chat_types
from spectui.tui.app import SpecApp
from spectui.tui.screens.chats import ChatsScreen
from spectui.tui.screens.confirm import ConfirmScreen
from spectui.tui.screens.name import NameScreen
from tests.conftest import SMOL
from tests.textual_private import notices
from tests.tui_helpers import SHORT, answered, burst, chat_args, fixed_chat, resolved, send, sync, until


async def rename_in_picker(pilot, app: SpecApp, name: str) -> None:
    """ctrl+l, then r on the chat highlighted (the open one first), the new name and enter."""
    await pilot.press("ctrl+l")
    await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
    await pilot.press("r")
    await until(pilot, lambda: isinstance(app.screen, NameScreen))
    app.screen.query_one(Input).value = name
    await pilot.press("enter")


@sync
async def test_rename_and_delete_chats_in_the_picker(fake, setup):
    other = fixed_chat()
    current = fixed_chat()
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(current.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await rename_in_picker(pilot, app, "Renamed")
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
        assert app.controller.state.chat.id != current.id and not app.controller.state.chat.messages  # a new chat


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
        assert app.controller.state.chat.id == rockets.id
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
        await rename_in_picker(pilot, app, "My name")
        await pilot.press("escape")
        await pilot.pause()
        await send(pilot, app, SHORT)
        await answered(pilot, app)
    assert chat_store.load_chat(chat.id).title == "My name"


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
    setup = started[0].controller.state.setup
    assert (setup.spec.label, setup.spec.draft_n_max, setup.system, setup.model) == ("ngram-mod", 6, "Be terse.", SMOL)
    assert setup.temp == 0  # a flag given now wins over the chat's

    saved_with_setup(model="/gone/model.gguf", model_draft=None, temp=0.9)
    assert chat_command.main(chat_args("--resume")) == 0
    assert started[1].controller.state.setup.model == SMOL
    assert "/gone/model.gguf, which is gone; keeping smollm2" in capsys.readouterr().err


@sync
async def test_opening_a_chat_restores_its_settings_or_says_its_models_are_gone(fake, setup):
    chat = saved_with_setup(spec_type="ngram-mod", temp=0.5, n_predict=9)
    gone = saved_with_setup(model="/gone/model.gguf")
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.open_chat(chat.id)
        await until(pilot, lambda: fake.spec.label == "ngram-mod")
        assert (
            fake.sampling.temp == 0.5 and app.controller.state.setup.n_predict == 9 and not app.controller.state.loading
        )
        app.controller.open_chat(gone.id)
        await until(pilot, lambda: app.controller.state.chat.id == gone.id)
        await until(pilot, lambda: any("which is gone" in n.message for n in notices(app)))
        assert app.controller.state.session is fake and not app.controller.state.loading


@sync
async def test_the_delete_prompt_shows_a_long_title_whole(fake, setup):
    title = "A very long chat title that goes on and on about speculative decoding and more words"
    current = fixed_chat()
    chat_store.rename_chat(current.id, title)
    app = SpecApp(setup, session=fake, chat=chat_store.load_chat(current.id))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen))
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        box, question = app.screen.query_one("#confirm"), app.screen.query(Label).first()
        await until(pilot, lambda: question.size.height > 1)  # wrapped, within the box
        assert question.region.right <= box.region.right
        shown = " ".join(question.render_line(y).text.strip() for y in range(question.size.height))
        assert f"“{title}”" in shown
