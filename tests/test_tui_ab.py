"""The A/B screen driven with Pilot, and the verdict (engine.ab) on synthetic events.

The full run and its judgement use a real model (SmolLM2 135M drafting for itself, loaded
once per module); refusals, stopping and the fallback use a FakeSession.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from spectui.engine.ab import compare
from spectui.engine.events import PromptDone, Round, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.engine.stats import first_divergence, summarize
from spectui.llama.spec_config import SpecConfig
from spectui.tui.app import SpecApp
from spectui.tui.screens.ab import ABScreen
from spectui.tui.widgets.message import AnswerChunk
from spectui.tui.widgets.side_pane import SidePane
from spectui.tui.widgets.verdict import render_verdict
from tests.fake_session import FakeSession
from tests.tui_helpers import LONG, SHORT, chat_args, resolved, run_ab, send, sync, until

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs


@pytest.fixture(scope="module")
def setup():
    """-n 32 here: conftest.py's session, fresh and slow_fake follow it."""
    return resolved(chat_args("-n", "32"))


def styles(pane: SidePane) -> set[str]:
    return {str(span.style) for chunk in pane.query(AnswerChunk) for span in chunk.render().spans}


# --- the screen on the real model -------------------------------------------------------


@sync
@pytest.mark.model
async def test_ab_runs_both_side_by_side_and_judges(fresh, setup):
    app = SpecApp(setup, session=fresh)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, ABScreen)
        a, b = screen.panes
        # none against the chat's own type (the smollm2 preset's draft-simple)
        assert (a.query_one(Select).value, b.query_one(Select).value) == ("none", "draft-simple")
        assert a.query_one(Input).value == b.query_one(Input).value == str(setup.spec.draft_n_max)
        b.query_one(Input).value = "4"

        await run_ab(pilot, screen, SHORT)
        await until(pilot, lambda: b.turn is not None and not screen.running)
        assert fresh.spec == setup.spec  # the app's configuration is back

        ends = [pane.turn.end for pane in (a, b)]
        assert all(e.stop_reason in (StopReason.EOS, StopReason.N_PREDICT) for e in ends)
        assert a.turn.message.config == "none" and b.turn.message.config == "draft-simple n-max 4"
        assert "$spec-draft" not in styles(a) and "$spec-draft" in styles(b)  # the overlay, as in the chat
        sa, sb = (summarize(pane.turn.events) for pane in (a, b))
        assert sa.n_drafted == 0 and sb.n_drafted > 0 and max(r.n_drafted for r in b.turn.rounds) <= 4
        for pane, s in ((a, sa), (b, sb)):
            panel = pane.query_one(".side-stats").visual.plain
            assert "tok/s turn" in panel and f"{s.n_accepted}/{s.n_drafted}" in panel

        v = screen.verdict
        assert v.speedup == pytest.approx(sb.timing.tok_per_s / sa.timing.tok_per_s)
        text = screen.query_one("#ab-verdict").visual.plain
        assert f"speedup of B over A ×{v.speedup:.2f} from 1 run each: noise unknown" in text
        assert (
            "A - (nothing drafted)" in text and f"B {sb.acceptance_rate:.0%} ({sb.n_accepted}/{sb.n_drafted})" in text
        )
        diverged = first_divergence(ends[0].tokens, ends[1].tokens)
        if diverged is None:  # greedy verification: the expected case
            assert v.identical and "output identical" in text
        else:  # a near-tie flipped by batched vs single-token numerics, reported as such
            assert v.divergence.index == diverged and f"differs from token {diverged}" in text
            assert "near-tie" in text

        await pilot.press("escape")
        assert not isinstance(app.screen, ABScreen)


@sync
async def test_ab_refuses_while_busy_and_esc_stops_the_run(slow_fake):
    app = SpecApp(resolved(chat_args("-n", "1000")), session=slow_fake)
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, LONG)
        await until(pilot, lambda: app.controller.turn is not None and len(app.controller.turn.rounds) >= 1)
        await pilot.press("f2")  # the chat is answering: refused
        assert not isinstance(app.screen, ABScreen)
        assert any("Stop the answer first" in n.message for n in app._notifications)
        await pilot.press("escape")
        await until(pilot, lambda: not app.controller.generating)

        await pilot.press("f2")
        screen = app.screen
        screen.panes[0].query_one(Input).value = "99"
        screen.query_one("#ab-prompt", Input).value = LONG
        await pilot.press("enter")  # an invalid n-max: refused with the reason
        assert not screen.running and any("from 1 to 64" in n.message for n in app._notifications)
        screen.panes[0].query_one(Input).value = "3"

        await run_ab(pilot, screen, LONG)
        await until(pilot, lambda: screen.panes[0].turn is not None and len(screen.panes[0].turn.rounds) >= 2)
        before = (slow_fake.spec, len(app.controller.chat.messages))
        await pilot.press("ctrl+t", "ctrl+r")  # the chat's keys are not the A/B view's: no change, no answer
        assert (slow_fake.spec, len(app.controller.chat.messages)) == before and not app.controller.generating
        app.controller.set_spec_type("none")  # as the command palette would: refused
        await pilot.pause()
        assert any("A/B view uses the models" in n.message for n in app._notifications) and slow_fake.spec == before[0]
        await pilot.press("escape")  # stops A; B never starts
        await until(pilot, lambda: not screen.running)
        assert screen.panes[0].turn.end.stop_reason == StopReason.CANCELLED and screen.panes[1].turn is None
        assert screen.verdict is None and "No verdict: B" in screen.query_one("#ab-verdict").visual.plain
        assert slow_fake.spec == app.controller.setup.spec  # restored
        await pilot.press("escape")
        assert not isinstance(app.screen, ABScreen)


@sync
async def test_ab_without_a_draft_model_falls_back_for_b(setup):
    session = FakeSession(spec=SpecConfig(types=("none",)), draft=False)
    app = SpecApp(setup, session=session)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f2")
        a, b = app.screen.panes
        assert (a.query_one(Select).value, b.query_one(Select).value) == ("none", "ngram-simple")
        assert "No draft model is loaded" in app.screen.query_one("#ab-verdict").visual.plain
        await pilot.press("escape")
        session.configure(SpecConfig(types=("ngram-simple",)))  # a chat on ngram-simple: B is its own type
        await pilot.press("f2")
        assert "No draft model is loaded" not in app.screen.query_one("#ab-verdict").visual.plain


# --- the verdict on synthetic events ------------------------------------------------------


def run_events(
    spec_type: str, ids: list[int], per_round: int, drafted: int, tok_per_s: float, stop=StopReason.EOS, verify="greedy"
) -> list:
    """A turn emitting `ids` (piece "<id>") `per_round` at a time, drafting `drafted` per round
    and accepting per_round - 1 of them, at `tok_per_s`."""
    events = [
        TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={"spec_type": spec_type}),
        PromptDone(t=1.0, t_prompt=1.0),
    ]
    for i in range(0, len(ids), per_round):
        chunk = ids[i : i + per_round]
        tokens = tuple(
            Token(t, f"<{t}>", Source.NGRAM if j < len(chunk) - 1 else Source.TARGET) for j, t in enumerate(chunk)
        )
        accepted = len(chunk) - 1 if drafted else 0
        events.append(
            Round(
                index=i,
                t=1.0 + (i + len(chunk)) / tok_per_s,
                spec_type=spec_type if drafted else None,
                drafted=tuple(range(drafted)),
                n_accepted=accepted,
                rejected=tuple(range(drafted - accepted)),
                rejected_text="",
                tokens=tokens,
                t_draft=0.0,
                t_verify=0.0,
                t_other=0.0,
                n_max=3,
                verify=verify,
                n_past=5 + i,
                configured=spec_type,
            )
        )
    events.append(TurnEnd(t=9.0, stop_reason=stop, text="", n_generated=len(ids), tokens=tuple(ids)))
    return events


def test_verdict_identical_speedup_and_acceptance():
    a = run_events("none", list(range(12)), 1, 0, 10.0)
    b = run_events("draft-simple", list(range(12)), 3, 3, 25.0)
    v = compare(a, b)
    assert v.identical and v.greedy and v.notes == () and v.drafted_nothing == ()
    assert v.speedup == pytest.approx(2.5)
    assert "×2.50 from 1 run each: noise unknown" in render_verdict(v, ["none", "draft-simple n-max 3"]).plain
    assert v.summaries[0].acceptance_rate is None
    assert v.summaries[1].acceptance_rate == pytest.approx(2 / 3)


def test_verdict_divergence_excerpt_and_honest_notes():
    a = run_events("ngram-simple", list(range(10)), 1, 0, 10.0)
    b = run_events("draft-simple", [0, 1, 2, 3, 4, 99, 98, 97], 2, 2, 5.0, stop=StopReason.CANCELLED)
    v = compare(a, b)
    assert v.divergence.index == 5 == first_divergence(range(10), [0, 1, 2, 3, 4, 99])
    assert v.divergence.before == "<0><1><2><3><4>"
    assert (v.divergence.a, v.divergence.b) == ("<5><6><7><8><9>", "<99><98><97>")
    assert v.speedup == pytest.approx(0.5)
    notes = " ".join(v.notes)
    assert "A (ngram-simple) drafted nothing" in notes and "B ended early (cancelled)" in notes
    assert v.drafted_nothing == ("A",)  # no speedup is claimed for plain decoding under another name
    shown = render_verdict(v, ["ngram-simple", "draft-simple n-max 2"]).plain
    assert "speedup of B over A - A drafted nothing" in shown and "×0.50" not in shown
    assert "near-tie" in notes

    prefix = compare(run_events("none", [1, 2, 3], 1, 0, 1.0), run_events("none", [1, 2], 1, 0, 1.0))
    assert prefix.divergence.index == 2 and prefix.divergence.b == ""

    sampled = compare(
        run_events("none", [1, 2], 1, 0, 1.0, verify="match"),
        run_events("ngram-mod", [1, 3], 2, 2, 1.0, verify="match"),
    )
    assert not sampled.greedy and "expected to differ" in " ".join(sampled.notes)
    assert "near-tie" not in " ".join(sampled.notes)
