"""The settings screen (f10) with Pilot: applied through the switcher from the next turn, saved
into a preset, opened at one setting from the palette, whole at 80 columns, greying what the
spec type does not use; and its fields checked as Setup checks a flag."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from textual.widgets import Input, Select, TextArea

from spectui.config import presets
from spectui.llama.sampling import SamplingParams
from spectui.tui.app import SpecApp
from spectui.tui.screens.settings import SettingsScreen
from tests.fake_session import FakeSession
from tests.textual_private import notices
from tests.tui_helpers import SHORT, answered, palette_offers, send, sync, until


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
        assert "--top-k must be a whole number, got 'many'" in screen.query_one("#error").visual.plain
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


@sync
async def test_at_24_lines_a_refused_value_scrolls_its_reason_into_view(fake, setup):
    """The reason sits below the fields: on an 80x24 terminal ctrl+s said nothing visible."""
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
        screen = app.screen
        error = screen.query_one("#error")
        assert not app.screen.region.contains_region(error.region), "fits without scrolling: the test says nothing"
        await fill(pilot, screen, {"top_p": "2"})
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "top-p must be between 0 and 1" in error.visual.plain)
        await until(pilot, lambda: app.screen.region.contains_region(error.region))


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
        assert app.controller.state.setup.seed == -1 and fake.sampling.seed is None  # -1: random, as the flag says
        app.controller.state.setup = replace(app.controller.state.setup, seed=None)  # random, as none
        said = len(notices(app))
        await pilot.press("f10")
        assert app.screen.query_one("#seed", Input).value == "-1"
        await pilot.press("ctrl+s")  # unchanged as written: nothing to apply, nothing said
        assert not isinstance(app.screen, SettingsScreen) and len(notices(app)) == said
        assert app.controller.state.setup.seed is None


@pytest.mark.parametrize(
    "name, text, says",
    [
        ("temp", "-5", "--temp must be 0 (greedy) or more"),
        ("spec_draft_n_max", "99", "--spec-draft-n-max must be between 0 and 64"),
        ("seed", "-2", "--seed must be 0 to 4294967295, or -1 for a random one"),
        ("top_k", "x", "--top-k must be a whole number, got 'x'"),
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
