"""The A/B screen driven with Pilot, and the verdict (engine.ab) on synthetic events.

The full run and its judgement use a real model (SmolLM2 135M drafting for itself, loaded
once per module); refusals, stopping and the fallback use a FakeSession.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.color import Color
from textual.widgets import Footer, Input, Select, Static

from spectui.engine.ab import compare
from spectui.engine.events import StopReason
from spectui.engine.stats import first_divergence, summarize
from spectui.spec_config import SpecConfig
from spectui.spec_types import Spec
from spectui.tui.app import SpecApp
from spectui.tui.messages import RunEnded, SideStarted, TurnEvents
from spectui.tui.screens.ab import ABScreen
from spectui.tui.widgets.message import AnswerChunk
from spectui.tui.widgets.side_pane import Scroller, SidePane, VerdictBox
from spectui.tui.widgets.stats_panel import compact
from spectui.tui.widgets.verdict import render_verdict
from tests.fake_session import FakeSession
from tests.helpers.events import recorded, run_events
from tests.textual_private import notices
from tests.tui_helpers import LONG, SHORT, chat_args, resolved, rounds_so_far, run_ab, send, sync, until

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
        assert (a.query_one(Select).value, b.query_one(Select).value) == ((Spec.NONE,), (Spec.DRAFT_SIMPLE,))
        assert a.query_one(Input).value == b.query_one(Input).value == str(setup.spec.draft_n_max)
        b.query_one(Input).value = "4"

        await run_ab(pilot, screen, SHORT)
        await until(pilot, lambda: b.turn is not None and not screen.running)
        assert fresh.spec == setup.spec  # the app's configuration is back

        ends = [pane.turn.end for pane in (a, b)]
        assert all(e.stop_reason in (StopReason.EOS, StopReason.N_PREDICT) for e in ends)
        assert a.turn.message.config_label == "none" and b.turn.message.config_label == "draft-simple n-max 4"
        assert "$spec-draft" not in styles(a) and "$spec-draft" in styles(b)  # the overlay, as in the chat
        sa, sb = (summarize(pane.turn.events) for pane in (a, b))
        assert sa.n_drafted == 0 and sb.n_drafted > 0 and max(r.n_drafted for r in b.turn.rounds) <= 4
        panels = [pane.query_one(".side-stats").visual.plain for pane in (a, b)]
        assert all("tok/s turn" in panel for panel in panels)
        assert "the baseline" in panels[0] and f"{sb.n_accepted}/{sb.n_drafted}" in panels[1]

        v = screen.verdict
        assert v.speedup == pytest.approx(sb.timing.tok_per_s / sa.timing.tok_per_s, rel=0.01)  # of the shown speeds
        text = screen.query_one("#ab-verdict").visual.plain
        assert f"speedup ×{v.speedup:.2f} = B " in text and "1 run: noise unknown" in text
        assert "A - (the baseline)" in text and f"B {sb.acceptance_rate:.0%} ({sb.n_accepted}/{sb.n_drafted})" in text
        diverged = first_divergence(ends[0].tokens, ends[1].tokens)
        if diverged is None:  # greedy verification: the expected case
            assert v.identical and "output identical" in text
        else:  # a near-tie flipped by batched vs single-token numerics, reported as such
            assert v.divergence.index == diverged and f"differs at token {diverged + 1}" in text
            assert "near-tie" in text

        await pilot.press("escape")
        assert not isinstance(app.screen, ABScreen)


@sync
async def test_ab_refuses_while_busy_and_esc_stops_the_run(slow_fake):
    app = SpecApp(resolved(chat_args("-n", "1000")), session=slow_fake)
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, LONG)
        await until(
            pilot,
            lambda: rounds_so_far(app) >= 1,
        )
        await pilot.press("f2")  # the chat is answering: refused
        assert not isinstance(app.screen, ABScreen)
        assert any("Stop the answer first" in n.message for n in notices(app))
        await pilot.press("escape")
        await until(pilot, lambda: not app.controller.state.generating)

        await pilot.press("f2")
        screen = app.screen
        screen.panes[1].query_one(Input).value = "99"
        screen.query_one("#ab-prompt", Input).value = LONG
        await pilot.press("enter")  # an invalid n-max: refused with the reason
        assert not screen.running and any("B: draft n-max" in n.message for n in notices(app))
        screen.panes[1].query_one(Input).value = "3"

        await run_ab(pilot, screen, LONG)
        await until(pilot, lambda: screen.panes[0].turn is not None and len(screen.panes[0].turn.rounds) >= 2)
        before = (slow_fake.spec, len(app.controller.state.chat.messages))
        await pilot.press("ctrl+t", "ctrl+r")  # the chat's keys are not the A/B view's: no change, no answer
        assert (
            slow_fake.spec,
            len(app.controller.state.chat.messages),
        ) == before and not app.controller.state.generating
        app.controller.switcher.set_spec_type("none")  # as the command palette would: refused
        await pilot.pause()
        assert any("A/B view uses the models" in n.message for n in notices(app)) and slow_fake.spec == before[0]
        await pilot.press("escape")  # stops A; B never starts
        await until(pilot, lambda: not screen.running)
        assert screen.panes[0].turn.end.stop_reason == StopReason.CANCELLED and screen.panes[1].turn is None
        assert screen.verdict is None and "No verdict: A, B did not" in screen.query_one("#ab-verdict").visual.plain
        assert slow_fake.spec == app.controller.state.setup.spec  # restored
        await pilot.press("escape")
        assert not isinstance(app.screen, ABScreen)


@sync
async def test_ab_without_a_draft_model_falls_back_for_b(setup):
    session = FakeSession(spec=SpecConfig(types=("none",)), draft=False)
    app = SpecApp(setup, session=session)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f2")
        a, b = app.screen.panes
        assert (a.query_one(Select).value, b.query_one(Select).value) == ((Spec.NONE,), (Spec.NGRAM_SIMPLE,))
        assert "No draft model is loaded" in app.screen.query_one("#ab-verdict").visual.plain
        await pilot.press("escape")
        session.configure(SpecConfig(types=("ngram-simple",)))  # a chat on ngram-simple: B is its own type
        await pilot.press("f2")
        assert "No draft model is loaded" not in app.screen.query_one("#ab-verdict").visual.plain


@sync
async def test_the_chats_toasts_do_not_cover_the_ab_intro(setup):
    app = SpecApp(setup, session=FakeSession(spec=setup.spec))
    async with app.run_test(size=(80, 24)) as pilot:
        app.notify("a toast of the chat's", timeout=30)
        await pilot.press("f2")
        assert isinstance(app.screen, ABScreen) and not notices(app)


@sync
async def test_the_ab_view_takes_the_n_max_the_chat_and_its_flag_take(setup):
    """0 (draft nothing) is a draft n-max the flag and f10 take: the A/B view took only 1 to 64."""
    session = FakeSession(spec=SpecConfig(types=("draft-simple",), draft_n_max=0))
    app = SpecApp(setup, session=session)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f2")
        b = app.screen.panes[1]
        assert b.query_one(Input).value == "0"
        base = SpecConfig(types=("draft-simple",))
        spec = b.spec(base)
        assert isinstance(spec, SpecConfig) and spec.draft_n_max == 0
        b.query_one(Input).value = "65"
        assert b.spec(base) == "B: draft n-max must be a whole number between 0 and 64, not '65'"


@sync
async def test_the_n_max_box_shows_only_where_n_max_bounds_drafts_and_typing_edits_it(setup):
    """none and the n-gram types draft to their own sizes, and auto does without a draft model:
    no n-max box there; tabbing into B's box and typing edits its value, never replaces it."""
    session = FakeSession(spec=SpecConfig(types=("draft-simple",)))
    app = SpecApp(setup, session=session)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f2")
        a, b = app.screen.panes
        assert not a.query_one(Input).display and not a.query_one(".n-max").display  # A runs none
        assert b.query_one(Input).display and b.query_one(".n-max").display
        b.query_one(Input).focus()
        await pilot.press("2")
        assert b.query_one(Input).value == "32"
        b.query_one(Select).value = (Spec.NGRAM_MOD,)
        await pilot.pause()
        assert not b.query_one(Input).display
        b.query_one(Select).value = (Spec.AUTO,)
        await pilot.pause()
        assert b.query_one(Input).display  # auto bounds the draft model's drafts
    app = SpecApp(setup, session=FakeSession(spec=SpecConfig(types=("auto",)), draft=False))
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f2")
        assert app.screen.panes[1].query_one(Select).value == (Spec.AUTO,)
        assert not app.screen.panes[1].query_one(Input).display


def lines(word: str, n: int) -> list[tuple[list[str], str, str]]:
    """Rounds (accepted pieces, rejected text, the target's piece) of an answer of `n` lines."""
    return [([word, f" {i}"], "", "\n") for i in range(n)]


async def show_run(pilot, screen: ABScreen, sides) -> None:
    """A finished run, as the worker would post it: (spec type, rounds, tok/s) per side."""
    for side, (spec_type, rounds, tok_per_s) in enumerate(sides):
        screen.post_message(SideStarted(side, SpecConfig(types=(spec_type,))))
        screen.post_message(TurnEvents(recorded(spec_type, rounds, tok_per_s)))
    screen.post_message(RunEnded())
    await until(pilot, lambda: screen.verdict is not None)
    await pilot.pause()


@sync
async def test_at_80x24_each_side_shows_five_lines_of_its_answer_and_the_verdict_whole(setup):
    app = SpecApp(setup, session=FakeSession(spec=setup.spec))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        screen = app.screen
        # the sides differ from the second token: the longest verdict, its divergence and a note,
        # and run twice: the pooled speedup and this run's own
        b = [(["Sure", "Sure"], "", ":\n"), *lines("beta", 12)]
        for _ in range(2):
            await show_run(pilot, screen, (("none", lines("alpha", 12), 20.0), ("draft-simple", b, 50.0)))
        bottom = screen.query_one(Footer).region.y
        for pane in screen.panes:
            answers = pane.query_one(".answers", Scroller)
            assert answers.region.bottom <= bottom
            assert answers.scrollable_content_region.height >= 5 and pane.answer.region.height >= 5
            assert pane.query_one(".side-line").region.bottom <= bottom and not pane.query_one(".side-stats").display
        box, verdict = screen.query_one(VerdictBox), screen.query_one("#ab-verdict", Static)
        text = verdict.visual.plain
        assert "differs at token 2" in text and "near-tie" in text and "this run ×2.50" in text
        assert box.region.bottom <= bottom
        assert verdict.region.height <= box.scrollable_content_region.height and not box.allow_focus()  # whole
        for v in worst_verdicts():  # and every verdict as long as runs make them
            verdict.update(render_verdict(v, ["ngram-simple", "draft-simple n-max 3"]))
            await pilot.pause()
            assert verdict.region.height <= box.scrollable_content_region.height, verdict.visual.plain
            assert box.region.bottom <= bottom and not box.allow_focus()


def worst_verdicts():
    """Verdicts as long as runs make them: one run or several, greedy or sampled, outputs
    apart after a long common text, a side that drafted nothing."""
    words = {i: f" word{i}" for i in range(20)}
    same = list(range(12))
    apart = [*range(10), 19]
    for verify in ("greedy", "match"):
        for idle in (0, 3):
            a = run_events("ngram-simple", same, 1, idle, 123.4, verify=verify, pieces=words)
            b = run_events("draft-simple", apart, 3, 3, 234.5, verify=verify, pieces=words)
            v = compare(a, b)
            for runs in ((), (1.91, 1.88, v.speedup), (0.97, 1.04, v.speedup)):
                yield replace(v, speedups=runs)


def ring(widget) -> Color | None:
    """The colour that marks a control: its left frame, else (a frameless control on a short
    screen) its background."""
    if isinstance(widget, Select):
        widget = widget.query_one("SelectCurrent")  # by type name: Textual does not export the class
    kind, colour = widget.styles.border_left
    return colour if kind not in ("", "none", "blank") else widget.styles.background


def near(colour: Color | None, accent: Color) -> bool:
    """The same hue, whatever its opacity (Textual rounds a theme colour by a unit)."""
    return colour is not None and max(abs(x - y) for x, y in zip(colour.rgb, accent.rgb)) <= 2


@sync
async def test_the_focused_control_is_marked_in_the_accent_colour_in_every_theme_and_size(setup):
    for size in ((140, 44), (80, 24)):
        app = SpecApp(setup, session=FakeSession(spec=setup.spec))
        async with app.run_test(size=size) as pilot:
            await pilot.press("f2")
            screen = app.screen
            for theme in ("spectui-dark", "spectui-light", "spectui-cb"):
                app.theme = theme
                accent = Color.parse(app.current_theme.accent)
                screen.query_one("#ab-prompt").focus()
                await pilot.pause()
                seen = []
                for _ in range(4):  # the prompt, A's type (A runs none: no n-max box), B's type and n-max
                    focused = screen.focused
                    seen.append(focused.id)
                    assert near(ring(focused), accent), (theme, size, focused.id)
                    lit = [near(pane.query_one(".side-name").styles.background, accent) for pane in screen.panes]
                    assert lit == [pane in focused.ancestors for pane in screen.panes]  # the side it is on
                    await pilot.press("tab")
                    assert not near(ring(focused), accent)  # blurred: the mark moved on
                assert seen == ["ab-prompt", "type-a", "type-b", "nmax-b"] and screen.focused.id == "ab-prompt"
                assert screen.panes[0].query_one(Input).disabled  # A's n-max: none has none


# --- the verdict on synthetic events ------------------------------------------------------


def test_verdict_identical_speedup_and_acceptance():
    a = run_events("none", list(range(12)), 1, 0, 10.0)
    b = run_events("draft-simple", list(range(12)), 3, 3, 25.0)
    v = compare(a, b)
    assert v.identical and v.greedy and v.notes == () and v.drafted_nothing == ()
    assert v.speedup == pytest.approx(2.5)
    shown = render_verdict(v, ["none", "draft-simple n-max 3"]).plain
    assert "speedup ×2.50 = B 25.0 ÷ A 10.0 tok/s · 1 run: noise unknown, enter reruns" in shown
    assert "enter" not in render_verdict(v, ["none", "draft-simple n-max 3"], live=False).plain  # a replay's
    assert v.summaries[0].acceptance_rate is None
    assert v.summaries[1].acceptance_rate == pytest.approx(2 / 3)


def test_verdict_divergence_excerpt_and_honest_notes():
    a = run_events("ngram-simple", list(range(10)), 1, 0, 10.0)
    b = run_events("draft-simple", [0, 1, 2, 3, 4, 99, 98, 97], 2, 2, 5.0, stop=StopReason.CANCELLED)
    v = compare(a, b)
    assert v.divergence.index == 5 == first_divergence(range(10), [0, 1, 2, 3, 4, 99])
    assert v.divergence.before == "<0><1><2><3><4>"
    assert (v.divergence.a, v.divergence.b) == ("<5>", "<99>")  # the first differing token of each
    assert v.speedup == pytest.approx(0.5)
    notes = " ".join(v.notes)
    assert "B ended early (cancelled)" in notes
    assert v.drafted_nothing == ("A",)  # no speedup is claimed for plain decoding under another name
    shown = render_verdict(v, ["ngram-simple", "draft-simple n-max 2"]).plain
    assert "speedup -: A drafted nothing, it ran as plain decoding (B 5.00 ÷ A 10.0 tok/s)" in shown
    assert "×0.50" not in shown
    assert "near-tie" in notes

    prefix = compare(run_events("none", [1, 2, 3], 1, 0, 1.0), run_events("none", [1, 2], 1, 0, 1.0))
    assert prefix.divergence.index == 2 and prefix.divergence.b is None
    assert prefix.divergence.words() == "at token 3 (after '<1><2>'): A wrote '<3>', B had ended"

    sampled = compare(
        run_events("none", [1, 2], 1, 0, 1.0, verify="match"),
        run_events("ngram-mod", [1, 3], 2, 2, 1.0, verify="match"),
    )
    assert not sampled.greedy and "expected to differ" in " ".join(sampled.notes)
    assert "near-tie" not in " ".join(sampled.notes)


def test_the_speedup_shown_is_the_one_the_tok_s_beside_it_give_and_several_runs_say_theirs():
    """One definition: a run's speedup is B's tok/s over A's, as shown beside it; over several
    runs of the pair the median of those ratios, said as such, with this run's own beside."""
    v = compare(run_events("none", list(range(12)), 1, 0, 28.6), run_events("ngram-mod", list(range(12)), 3, 3, 30.1))
    assert v.speedup == pytest.approx(30.1 / 28.6)
    one = render_verdict(v, ["none", "ngram-mod"]).plain
    assert "speedup ×1.05 = B 30.1 ÷ A 28.6 tok/s · 1 run" in one
    pooled = render_verdict(replace(v, speedups=(1.12, 1.15, v.speedup)), ["none", "ngram-mod"]).plain
    assert "speedup ×1.12 pays, the median of 3 interleaved runs (×1.05-×1.15)" in pooled
    assert "this run ×1.05 = B 30.1 ÷ A 28.6 tok/s" in pooled
    # slow runs show three figures (not 2.1 ÷ 0.8); 6.3549 / 2.7055 is 2.349, but the speeds
    # as shown give 2.343: the verdict says ×2.34
    for (a, b), said in (((0.812, 2.14), "×2.64 = B 2.14 ÷ A 0.812"), ((2.7055, 6.3549), "×2.34 = B 6.35 ÷ A 2.71")):
        slow = compare(run_events("none", list(range(12)), 1, 0, a), run_events("ngram-mod", list(range(12)), 3, 3, b))
        assert f"speedup {said} tok/s" in render_verdict(slow, ["none", "ngram-mod"]).plain
    noise = render_verdict(replace(v, speedups=(0.97, 1.08, v.speedup)), ["none", "ngram-mod"]).plain
    assert "speedup within noise, ×0.97-×1.08 over 3 interleaved runs" in noise
    assert "this run ×1.05 = B 30.1 ÷ A 28.6 tok/s" in noise


CODE = {1: "Here it is:\n```python", 2: "\n", 3: "def", 4: " add", 5: "_numbers", 6: "(", 7: "a", 8: ")"}


def test_the_divergence_reads_as_words_quoting_each_sides_first_differing_token():
    a = run_events("none", [1, 2, 3, 4, 5, 7], 1, 0, 10.0, pieces=CODE)
    b = run_events("draft-simple", [1, 2, 3, 4, 6, 7, 8], 2, 2, 20.0, pieces=CODE)
    d = compare(a, b).divergence
    assert (d.index, d.a, d.b) == (4, "_numbers", "(")
    # the common text's end from a word's start, on one line, then each side's token
    assert d.words() == "at token 5 (after '…```python↵def add'): A wrote '_numbers', B wrote '('"
    shown = render_verdict(compare(a, b), ["none", "draft-simple n-max 2"]).plain
    assert "output differs at token 5 (after '…```python↵def add'): A wrote '_numbers', B wrote '('" in shown
    assert "\\n" not in shown and "then A" not in shown  # no repr of a text run, no code-like excerpt
    first = compare(a, run_events("none", [6], 1, 0, 10.0, pieces=CODE)).divergence
    assert first.words() == "at token 1: A wrote 'Here it is:↵```python', B wrote '('"  # nothing in common


def test_a_divergence_inside_a_character_quotes_the_character_each_side_began():
    """An emoji's first byte token has no text: the verdict said "A wrote '', B wrote ''"."""
    emoji = {1: "Hi", 2: "", 3: "👦", 4: "", 5: "🌌", 6: "!"}
    a = run_events("none", [1, 2, 3, 6], 1, 0, 10.0, pieces=emoji)
    b = run_events("none", [1, 4, 5, 6], 1, 0, 10.0, pieces=emoji)
    assert compare(a, b).divergence.words() == "at token 2 (after 'Hi'): A wrote '👦', B wrote '🌌'"
    cut = compare(a, run_events("none", [1, 4], 1, 0, 10.0, pieces=emoji)).divergence
    assert cut.words() == "at token 2 (after 'Hi'): A wrote '👦', B wrote '' (part of a character)"


def test_a_none_side_is_the_baseline_never_a_side_that_drafted_nothing():
    a = run_events("none", list(range(8)), 1, 0, 10.0)
    b = run_events("draft-simple", list(range(8)), 2, 2, 20.0)
    v = compare(a, b)
    assert v.is_baseline(0) and not v.is_baseline(1) and v.drafted_nothing == ()
    shown = render_verdict(v, ["none", "draft-simple n-max 2"]).plain
    assert "B draft-simple n-max 2 vs A none (the baseline)" in shown
    assert "acceptance A - (the baseline) · B 50% (4/8)" in shown
    assert "nothing" not in shown
    for one_line in (False, True):  # the side's own numbers, as the pane shows them
        numbers = compact(a, one_line).plain
        assert "the baseline" in numbers and "nothing" not in numbers and "0/0" not in numbers

    idle = compare(a, run_events("ngram-simple", list(range(8)), 1, 0, 10.0))  # speculated, drafted nothing
    assert idle.drafted_nothing == ("B",) and not idle.is_baseline(1)
    assert "B - (nothing drafted)" in render_verdict(idle, ["none", "ngram-simple"]).plain


def test_sampled_outputs_that_match_are_never_called_expected_to_differ():
    same = [run_events(t, [1, 2, 3], 1, 1 if t != "none" else 0, 10.0, verify="match") for t in ("none", "ngram-mod")]
    v = compare(*same)
    assert v.identical and not v.greedy
    shown = render_verdict(v, ["none", "ngram-mod"]).plain
    assert "output identical" in shown and "could have differed" in shown
    assert "expected to differ" not in shown

    apart = compare(same[0], run_events("ngram-mod", [1, 4], 2, 2, 10.0, verify="match"))
    shown = render_verdict(apart, ["none", "ngram-mod"]).plain
    assert "output differs" in shown and "expected to differ" in shown and "identical" not in shown
