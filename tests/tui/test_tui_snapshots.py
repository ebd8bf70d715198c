"""SVG snapshots of deterministic screens: a saved chat (fixed overlay segments) in each
view, the empty chat's starters, the help screen, a replayed A/B run and the side panel's
speedup with its spread, on a FakeSession (no model is loaded).
Live generation is left to test_tui.py: its timing varies.

Update after an intended change: pytest tests/tui/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from spectui.chat.panel import PanelState
from spectui.chat.turn import Baseline
from spectui.config.settings import Settings, save_settings
from spectui.spec_config import SpecConfig
from spectui.spec_types import Spec
from spectui.store import chat_types
from spectui.tui.app import SpecApp
from spectui.tui.messages import RunEnded, SideStarted, TurnEvents
from spectui.tui.themed import ThemedApp
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.stats_panel import StatsPanel
from tests.fake_session import FakeSession
from tests.helpers.events import ANSWER_ROUNDS, recorded

SIZE = (120, 36)

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs


@pytest.fixture
def instant_fake(setup):
    """Here, no model: the recorded answer, replayed at once (conftest.py's setup, -n 48)."""
    return FakeSession(spec=setup.spec)


def saved_chat() -> chat_types.Chat:
    chat = chat_types.new_chat("smollm2")
    segments = [
        ("Here is", "draft"),
        (" a", "target"),
        (" function", "draft"),
        (" that", "ngram"),
        (" adds", "target"),
        (" numbers", "rejected"),
        (" two", "resampled"),
        (" numbers:\n\n", "draft"),
        ("```python\n", "ngram"),
        ("def add(a, b):\n    return a + b\n", "draft"),
        ("```\n", "target"),
        ("It returns", "draft"),
        (" their", "rejected"),
        (" the", "target"),
        (" sum.", "draft"),
    ]
    chat.messages = [
        chat_types.Message("user", "Write a python function that adds two numbers."),
        chat_types.Message(
            "assistant",
            "".join(t for t, k in segments if k != "rejected"),
            segments=segments,
            stats={"n_generated": 31, "acceptance_rate": 0.82, "tok_per_s": 48.5, "stop_reason": "eos"},
            config=chat_types.AnswerConfig(("draft-simple",), 3),
        ),
        chat_types.Message("user", "Thanks!"),
        chat_types.Message(
            "assistant",
            "You're welc",
            segments=[("You're", "draft"), (" welc", "target")],
            stopped=True,
            stats={"n_generated": 3, "stop_reason": "cancelled"},
            config=chat_types.AnswerConfig(("ngram-mod",), 16),
        ),
    ]
    return chat


async def steady(pilot) -> None:
    await pilot.pause()
    pilot.app.query_one(ChatInput).cursor_blink = False


def test_saved_chat_overlay(snap_compare, instant_fake, setup):
    assert snap_compare(SpecApp(setup, session=instant_fake, chat=saved_chat()), terminal_size=SIZE, run_before=steady)


def test_saved_chat_rejected_hidden(snap_compare, instant_fake, setup):
    save_settings(Settings(show_rejected=False))
    assert snap_compare(SpecApp(setup, session=instant_fake, chat=saved_chat()), terminal_size=SIZE, run_before=steady)


def test_saved_chat_markdown_without_panel(snap_compare, instant_fake, setup):
    save_settings(Settings(show_overlay=False, show_panel=False))
    assert snap_compare(SpecApp(setup, session=instant_fake, chat=saved_chat()), terminal_size=SIZE, run_before=steady)


def rejected_newlines_chat() -> chat_types.Chat:
    """Rejected drafts that hold newlines inside a heading, a list and code: on screen they
    stay inside their lines, and what is left reads as the answer."""
    chat = chat_types.new_chat("default")
    segments = [
        ("## Squares", "draft"),
        ("\n\nHere", "rejected"),
        ("\n\n", "target"),
        ("Three fruits:\n", "draft"),
        ("1. Apples\n2. Pears", "rejected"),
        ("1. Bananas\n", "target"),
        ("2. Figs\n\n", "draft"),
        ("```python\ndef square(n", "draft"),
        ("umber):\n    return number * number\n", "rejected"),
        ("um):\n", "target"),
        ("    return num", "ngram"),
        (" **\n", "rejected"),
        (" * num\n", "target"),
        ("```\n", "draft"),
    ]
    chat.messages = [
        chat_types.Message("user", "A heading, a list of fruits, and a square function."),
        chat_types.Message(
            "assistant",
            "".join(t for t, k in segments if k != "rejected"),
            segments=segments,
            stats={"n_generated": 40, "acceptance_rate": 0.6, "tok_per_s": 20.5, "stop_reason": "eos"},
            config=chat_types.AnswerConfig(("draft-simple",), 3),
        ),
    ]
    return chat


def test_saved_chat_rejected_newlines(snap_compare, instant_fake, setup):
    chat = rejected_newlines_chat()
    assert snap_compare(SpecApp(setup, session=instant_fake, chat=chat), terminal_size=SIZE, run_before=steady)


def test_help_screen(snap_compare, instant_fake, setup):
    assert snap_compare(SpecApp(setup, session=instant_fake), press=["f1"], terminal_size=SIZE, run_before=steady)


async def replay_ab(pilot) -> None:
    await pilot.press("f2")
    screen = pilot.app.screen
    prompt = screen.query_one("#ab-prompt", Input)
    prompt.cursor_blink = False
    prompt.value = "Write a python function that adds two numbers."
    screen.query_one("#type-a", Select).value = (Spec.NONE,)
    per_token = [([], "", p) for accepted, _, last in ANSWER_ROUNDS for p in accepted + [last]]
    for side, (spec_type, rounds, tok_per_s) in enumerate(
        (("none", per_token, 20.0), ("draft-simple", ANSWER_ROUNDS, 50.0))
    ):
        screen.post_message(SideStarted(side, SpecConfig(types=(spec_type,))))
        screen.post_message(TurnEvents(recorded(spec_type, rounds, tok_per_s)))
    screen.post_message(RunEnded())
    while screen.verdict is None:
        await pilot.pause()


def test_ab_screen_recorded_run(snap_compare, instant_fake, setup):
    assert snap_compare(SpecApp(setup, session=instant_fake), terminal_size=(140, 40), run_before=replay_ab)


def test_ab_screen_recorded_run_80x24(snap_compare, instant_fake, setup):
    """Below 100 columns and 30 rows the sides stack, compact: both answers show text."""
    assert snap_compare(SpecApp(setup, session=instant_fake), terminal_size=(80, 24), run_before=replay_ab)


def test_saved_chat_narrow_80x24(snap_compare, instant_fake, setup):
    """Below 100 columns the panel is a status line; nothing is cut off."""
    assert snap_compare(
        SpecApp(setup, session=instant_fake, chat=saved_chat()), terminal_size=(80, 24), run_before=steady
    )


def test_settings_screen(snap_compare, instant_fake, setup):
    assert snap_compare(SpecApp(setup, session=instant_fake), press=["f10"], terminal_size=SIZE, run_before=steady)


def test_empty_chat_offers_starters(snap_compare, instant_fake, setup):
    """The welcome card: the legend and the three starter prompts, one key each."""
    assert snap_compare(SpecApp(setup, session=instant_fake), terminal_size=SIZE, run_before=steady)


class PanelApp(ThemedApp):
    """The side panel alone, with a fixed state: a draft-simple answer at 50 tok/s against
    `none` answers whose median was 20 tok/s and which varied 10% among themselves."""

    CSS_PATH = None  # the chat's layout is not needed

    def compose(self):
        yield StatsPanel()

    def on_mount(self) -> None:
        self.apply_themes()
        self.query_one(StatsPanel).state = PanelState(
            spec=SpecConfig(types=("draft-simple",), draft_n_max=3),
            verify="greedy",
            events=recorded("draft-simple", ANSWER_ROUNDS, 50.0),
            baseline=Baseline(tok_s=20.0, spread=0.1, n=4),
            n_ctx=4096,
            n_past=29,
            memory="RSS 300 MiB",
        )


def test_panel_speedup_with_its_spread(snap_compare):
    assert snap_compare(PanelApp(), terminal_size=(40, 40))
