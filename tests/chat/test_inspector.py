"""The token inspector below the UI (spectui/chat/inspector.py): its stops line up with the
overlay's text, the cursor moves and jumps between rejected drafts, and the panel's facts
say p, q, the decision and a rejection's alternatives. On recorded rounds given verdicts
(the model is not what is tested here); and the controller's inspect switch."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spectui.chat.inspector import NO_DATA, Cursor, facts, saved_kinds, stops, summary_line
from spectui.chat.turn import LiveTurn
from spectui.chat.updates import Notice
from spectui.engine import verdicts
from spectui.engine.events import Round, TurnEnd
from spectui.engine.overlay import REJECTED
from spectui.engine.verdicts import Verdict
from spectui.spec_config import SpecConfig
from tests.chat.fake_screen import make
from tests.fake_session import FakeSession, load_trace
from tests.helpers.events import ANSWER_ROUNDS, INSPECTED, judged, recorded

pytestmark = pytest.mark.usefixtures("dirs")  # the controller's tests save chats: own data dirs (conftest.py)


def rounds_of(events: list) -> list[Round]:
    return [e for e in events if isinstance(e, Round)]


def answer(**kw) -> list[Round]:
    return rounds_of(judged(recorded("draft-simple", ANSWER_ROUNDS, 50.0), **kw))


def test_stops_cover_the_overlay_text_in_order():
    """Each stop's offsets are where the answer's segments show it, rejected drafts included."""
    for events in (load_trace().turns[0].events, recorded("draft-simple", ANSWER_ROUNDS, 50.0)):
        live = LiveTurn(SpecConfig())
        for e in events:
            if isinstance(e, Round):
                live.add(e)
        text = "".join(t for t, _ in live.message.segments)
        found = stops(rounds_of(list(events)))
        assert "".join(s.text for s in found) == text
        assert all(text[s.start : s.end] == s.text for s in found)
        assert [s.start for s in found[1:]] == [s.end for s in found[:-1]]


def test_cursor_moves_token_by_token_and_stops_at_the_ends():
    cursor = Cursor(answer())
    assert cursor.stop is not None and cursor.stop.text == "\n"  # on the last token
    assert not cursor.move(1)
    assert cursor.move(-1) and cursor.stop.text == " b"
    assert cursor.move(-100) and cursor.at == 0 and cursor.stop.text == "def"
    assert not cursor.move(-1)


def test_the_count_is_of_the_answers_tokens_and_a_rejected_draft_counts_apart():
    """ "token N of M": M is what the answer generated, never its rejected drafts too; a
    rejected draft says which of them it is and which token it follows."""
    events = load_trace(INSPECTED).turns[1].events  # 48 tokens, 17 rejected drafts
    end = next(e for e in events if isinstance(e, TurnEnd))
    rounds = rounds_of(list(events))
    n_rejected = sum(1 for r in rounds if r.rejected)
    assert n_rejected > 0
    cursor = Cursor(rounds)
    assert (cursor.n_tokens, cursor.n_rejected) == (end.n_generated, n_rejected)
    assert facts(cursor)[0].endswith(f"token {end.n_generated} of {end.n_generated}")
    assert cursor.jump_rejected(-1)
    token, rejected = cursor.counts()
    assert rejected == n_rejected and f"rejected draft {n_rejected} of {n_rejected}: " in facts(cursor)[0]
    assert facts(cursor)[0].endswith(f"after token {token} of {end.n_generated}")
    cursor.move(1)  # the target's token that replaced it: the next of the answer's
    assert facts(cursor)[0].endswith(f"token {token + 1} of {end.n_generated}")


def test_cursor_jumps_between_rejected_drafts():
    cursor = Cursor(answer())
    assert cursor.jump_rejected(-1) and cursor.stop.kind == REJECTED and cursor.stop.text == " c"
    assert not cursor.jump_rejected(-1)  # the answer's only rejection
    cursor.move(-100)
    assert cursor.jump_rejected(1) and cursor.stop.text == " c"
    assert not cursor.jump_rejected(1)


def test_cursor_starts_at_a_chosen_round():
    cursor = Cursor(answer(), at_round=2)
    assert cursor.stop.round.index == 2 and cursor.stop.text == "   "


def test_facts_at_a_rejection_name_the_alternatives_and_a_near_tie():
    cursor = Cursor(answer())
    cursor.jump_rejected(-1)
    assert cursor.stop.round.verify == "greedy"
    assert facts(cursor) == [
        "' c'  rejected draft 1 of 1: 1 token (draft-simple) · round 2 of 4, after token 5 of 12",
        *verdicts.facts(cursor.stop.verdict, "greedy", "):\n"),  # the verdict's lines, as the HTML's tooltips
    ]
    assert facts(cursor)[1:] == [
        "rejected: the target chose another token",
        "p 0.410 · q 0.600",
        "target's top 3: '):\\n' 0.460 · ' d' 0.410 · ' b' 0.050",
        "emitted '):\\n' instead (a near-tie)",
    ]


def test_a_rejected_draft_of_several_tokens_says_whose_numbers_they_are():
    (r,) = rounds_of(judged(recorded("draft-simple", [(["def"], " c d", ",")], 50.0)))
    r = replace(r, rejected=(1, 2), verdicts=(r.verdicts[0], replace(r.verdicts[1], text=" c")))
    cursor = Cursor([r])
    cursor.jump_rejected(-1)
    assert facts(cursor)[:3] == [
        "' c d'  rejected draft 1 of 1: 2 tokens (draft-simple) · round 1 of 1, after token 1 of 2",
        "its first token ' c', the only one judged",
        "rejected: the target chose another token",
    ]


def test_the_token_after_a_rejection_says_what_it_replaced():
    cursor = Cursor(answer())
    cursor.jump_rejected(-1)
    cursor.move(1)
    assert facts(cursor) == [
        "'):↵'  target / bonus · round 2 of 4, token 6 of 12",
        "emitted by the target instead of the rejected draft ' c' (← its numbers)",
    ]


def test_facts_of_an_accepted_draft_and_a_bonus_token():
    cursor = Cursor(answer())
    cursor.move(-100)
    assert facts(cursor)[1:] == ["accepted: the target's own choice", "p 0.900 · q 0.700"]
    cursor.move(3)  # "," : the bonus after all three drafts were accepted
    assert facts(cursor)[1:] == ["the target's bonus token: the whole draft (3 tokens) was accepted"]


def test_a_long_rejected_draft_is_cut_on_its_line():
    long = "word " * 20
    cursor = Cursor(rounds_of(recorded("ngram-simple", [([" a"], long, " b")], 50.0)))
    cursor.jump_rejected(-1)
    cut = "'word word word word word word word word'…"  # 39 characters of it
    assert facts(cursor)[0].startswith(cut + "  rejected draft 1 of 1: 1 token (ngram-simple)")


def test_rejection_sampling_shows_the_draw_against_the_acceptance_that_decided():
    rounds = [
        replace(r, verify="rejection") for r in answer(q=0.95, p_rejected=0.02, top=((5, 0.9), (4, 0.05)), draw=0.5)
    ]
    cursor = Cursor(rounds)
    cursor.jump_rejected(-1)
    assert facts(cursor)[1:] == [
        "rejected: the draw was not below the acceptance",
        "p 0.020 · q 0.950",
        "draw 0.500 ≥ acceptance 0.021",
        "target's top 3: '):\\n' 0.900 · ' b' 0.050",
        "emitted '):\\n' instead (a confident draft error)",
    ]


def test_sample_and_match_names_the_token_the_target_sampled_and_compares_no_draw():
    """The fault: a match-mode verdict recorded with p as its acceptance and the draw the
    target sampled with showed "acceptance 0.577 · draw 0.175" beside "rejected"."""
    rounds = [
        replace(r, verify="match", verdicts=tuple(replace(v, acceptance=v.p) if v.draw else v for v in r.verdicts))
        for r in answer(q=0.6, p_rejected=0.577, draw=0.175)
    ]
    cursor = Cursor(rounds)
    cursor.jump_rejected(-1)
    assert (cursor.stop.verdict.acceptance, cursor.stop.verdict.draw) == (0.577, 0.175)  # as such a trace has them
    assert facts(cursor)[1:] == [
        "rejected: the target sampled its own token: a different one",
        "p 0.577 · q 0.600",
        "target's top 3: '):\\n' 0.460 · ' d' 0.410 · ' b' 0.050",
        "the target sampled '):\\n' (p 0.460) and emitted it instead (a near-tie)",
    ]
    cursor.move(-1)
    assert facts(cursor)[1:] == ["accepted: the target sampled its own token: the same one", "p 0.900 · q 0.700"]


def test_sample_and_match_gives_the_sampled_token_s_recorded_p_outside_the_top_3():
    """The issue's second case: the target's top 3 ' made' 0.358 · ' composed' 0.284, and it sampled ' rich'."""
    v = Verdict(0, 4, 0.284, 0.5, None, None, False, ((5, 0.358), (4, 0.284)), 7, (" made", " composed"), "", 0.012)
    said = "the target sampled ' rich'{} and emitted it instead (a near-tie)"
    assert verdicts.facts(v, "match", " rich")[-1] == said.format(" (p 0.012)")
    older = replace(v, emitted_p=None)  # a version 2 trace's, of a token outside the top 3: no p to show
    assert verdicts.facts(older, "match", " rich")[-1] == said.format("")


def test_summary_line_counts_the_kinds_of_rejection():
    assert summary_line(answer()) == (
        "1 rejection: 1 near-tie (top-1 - top-2 < 0.1), 0 confident draft errors (q > 0.8, p < 0.1)"
    )
    errors = answer(q=0.95, p_rejected=0.02, top=((5, 0.9), (4, 0.05)))
    assert summary_line(answer() + errors) == (
        "2 rejections: 1 near-tie (top-1 - top-2 < 0.1), 1 confident draft error (q > 0.8, p < 0.1)"
    )


def test_a_saved_answer_keeps_its_kinds_of_rejection_briefly():
    assert saved_kinds({"inspect": {"rejections": 2, "near_ties": 1, "confident_errors": 1}}) == (
        "2 rejections: 1 near-tie, 1 confident draft error"
    )
    assert saved_kinds({}) is None and saved_kinds({"inspect": {"rejections": "2"}}) is None
    assert saved_kinds({"inspect": [1, 2, 3]}) is None  # a hand-edited chat file: no line, no crash


def test_an_answer_without_verdicts_says_so():
    rounds = rounds_of(recorded("draft-simple", ANSWER_ROUNDS, 50.0))
    assert summary_line(rounds) == NO_DATA
    cursor = Cursor(rounds)
    cursor.jump_rejected(-1)
    assert facts(cursor)[1:] == ["rejected: the target emitted '):↵' instead (no p, q: not inspected)"]
    cursor.move(-1)
    assert facts(cursor)[1:] == ["accepted: the target agreed (no p, q: not inspected)"]
    assert facts(Cursor([])) == ["no token to inspect in this answer"]


def test_inspect_is_on_where_llama_cpp_runs_on_the_cpu_and_a_toggle_stays(setup):
    controller, screen = make(setup)
    assert not controller.switcher.inspect  # nothing loaded yet
    controller.session_loaded(FakeSession(spec=setup.spec), setup, {"llama_cpp": {"gpu_offload": False}})
    assert controller.switcher.inspect and controller.state.session.inspect  # its cost there is measured: on
    controller.session_loaded(FakeSession(spec=setup.spec), setup, {"llama_cpp": {"gpu_offload": True}})
    assert not controller.state.session.inspect  # a GPU build: not measured, off until asked
    controller.switcher.toggle_inspect()
    assert controller.switcher.inspect and controller.state.session.inspect
    assert "Inspect on" in screen.of(Notice)[-1].text
    controller.session_loaded(FakeSession(spec=setup.spec), setup, {"llama_cpp": {"gpu_offload": True}})
    assert controller.state.session.inspect  # the person's choice outlasts a switch of models
    controller.switcher.toggle_inspect()
    assert not controller.state.session.inspect and screen.of(Notice)[-1].text == "Inspect off"
    controller.session_loaded(FakeSession(spec=setup.spec), setup, {"llama_cpp": {"gpu_offload": False}})
    assert not controller.state.session.inspect
