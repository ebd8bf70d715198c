"""The UI tests' FakeSession replays a real recording: check that it still is one, and that
the replay behaves as the engine does (cancel between rounds, live configuration)."""

from __future__ import annotations

import pytest

from spectui.engine.events import Round, StopReason, TurnEnd
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.session import Session
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams
from tests.fake_session import NAME, PROMPT, RECORDING, SPEC, FakeSession, load_recording, load_trace


@pytest.mark.model
def test_the_recording_is_what_the_engine_generates(smol: Model):
    """Greedy, so the tokens and rounds are the engine's own; re-record if this fails after
    an intended engine change (python -m tests.fake_session)."""
    recorded = load_recording()
    session = Session(smol, smol, spec=SPEC, sampling=SamplingParams(temp=0.0))
    try:
        events = list(session.generate(chat_messages([("user", PROMPT)]), limits=GenerationLimits(n_predict=48)))
    finally:
        session.close()
    assert events[-1].tokens == recorded[-1].tokens and events[-1].text == recorded[-1].text
    assert [(r.drafted, r.n_accepted) for r in events if isinstance(r, Round)] == [
        (r.drafted, r.n_accepted) for r in recorded if isinstance(r, Round)
    ]
    assert smol.name == NAME


def test_the_recording_is_a_trace_that_round_trips():
    assert load_trace().text() == RECORDING.read_text(encoding="utf-8")


def test_replay_follows_configuration_and_cancel():
    fake = FakeSession()
    rounds = []
    for event in fake.generate([{"role": "user", "content": "hi"}]):
        if isinstance(event, Round):
            rounds.append(event)
            if len(rounds) == 2:
                fake.configure(SPEC.with_types("ngram-mod").replace(draft_n_max=5))
            if len(rounds) == 4:
                fake.cancel()
        end = event
    assert [(r.configured, r.n_max) for r in rounds] == [(("draft-simple",), 3)] * 2 + [(("ngram-mod",), 5)] * 2
    assert isinstance(end, TurnEnd) and end.stop_reason == StopReason.CANCELLED
    assert end.text == "".join(t.piece for r in rounds for t in r.tokens)
