"""Switching models from the chat: the load's progress, a pair that does not fit refused while
the old pair answers, the picker's pair loaded in the background, a file that is not a GGUF
refused as it is entered. The loads run on SmolLM2 (and Gemma 3 for the pair that does not fit)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.command import CommandPalette
from textual.widgets import Input

from spectui.config.embedded import model_path
from spectui.config.recent import recent_models
from spectui.tui.app import SpecApp
from spectui.tui.screens.name import NameScreen
from tests.conftest import SMOL
from tests.textual_private import notices
from tests.tui_helpers import SHORT, answered, palette_offers, send, sync, until


@sync
@pytest.mark.model
async def test_opening_a_model_reports_its_load_progress(setup):
    from spectui.launch.opening import open_session

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
        app.controller.switcher.switch_models(SMOL, "gemma-3-270m-q4_k_m")
        assert app.controller.state.loading
        await until(pilot, lambda: not app.controller.state.loading, timeout=120)
        assert app.controller.state.session is fresh
        # the refusal's notice travels as a message after the state changes: wait for it
        await until(pilot, lambda: any("cannot draft for target" in n.message for n in notices(app)))
        assert app.chat_screen.sub_title == "SmolLM2 135M Instruct Q4_1 ⇠ draft SmolLM2 135M Instruct Q4_1"
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        assert app.controller.state.chat.messages[-1].content


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
            pilot,
            lambda: app.controller.state.session is not fresh and app.controller.state.session is not None,
            timeout=120,
        )
        status = app.controller.state.session.status()
        assert (
            status.draft is None
            and app.controller.state.setup.model == gguf
            and app.controller.state.setup.model_draft is None
        )
        assert app.controller.state.session.spec.label == "ngram-mod"  # draft-simple needs a draft: said in a note
        # the note and the header travel as messages after the session is set: wait for them
        await until(pilot, lambda: any("speculating with ngram-mod" in n.message for n in notices(app)))
        await until(pilot, lambda: app.chat_screen.sub_title == "SmolLM2 135M Instruct Q4_1 (no draft model)")
        assert recent_models() == [gguf]
        app.controller.switcher.close()


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
        assert not isinstance(app.screen, CommandPalette) and app.controller.state.session is fake
