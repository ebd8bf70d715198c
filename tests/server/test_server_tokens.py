"""A llama-server's answer counted in tokens as the server counts them: a token that ends in
part of a UTF-8 character is not streamed alone but with the one that completes it (or in the
final chunk), so Korean and emoji answers arrive in fewer chunks than tokens. Against
tests/helpers/fake_llama.py, which streams them as the vendored server does."""

from __future__ import annotations

import json

import pytest

from spectui.engine.events import Round
from spectui.engine.interface import GenerationLimits
from spectui.engine.server import ServerSession
from tests.cli_helpers import run_cli
from tests.helpers.fake_llama import FakeLlamaServer, State, chunks

# 안 split 2 + 1 bytes, 녕 whole, 😀 over three tokens (2 + 1 + 1 bytes), " 하" whole
SPLIT = [b"\xec\x95", b"\x88", "녕".encode(), b"\xf0\x9f", b"\x98", b"\x80", " 하".encode()]
pytestmark = pytest.mark.usefixtures("dirs")


def answer(n: int) -> str:
    """The text of n tokens: their bytes up to the last whole character."""
    return b"".join(SPLIT[i % len(SPLIT)] for i in range(n)).decode("utf-8", "ignore")


@pytest.fixture
def fake():
    server = FakeLlamaServer(State(pieces=SPLIT))
    yield server
    server.stop()


def test_the_fake_sends_fewer_chunks_than_tokens_as_the_server_does():
    """The case the counting is for: 32 tokens in 20 chunks, the last character cut by the limit."""
    sent = chunks(State(pieces=SPLIT), 32)
    assert len(sent) - 1 < 32 and sent[-1]["tokens_predicted"] == 32 and sent[-2]["tokens_predicted"] < 32


@pytest.mark.parametrize("n", [16, 32, 33])
def test_run_counts_a_korean_and_emoji_answer_in_the_servers_tokens(fake, n):
    r = run_cli("run", "--server", fake.url, "--json", "--ignore-eos", "-n", str(n), "안녕하세요를 반복해 주세요.")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["stats"]["n_generated"] == n and out["stop_reason"] == "n-predict"
    assert out["text"] == answer(n) and len(out["tokens"]) == n


def test_held_back_tokens_close_the_round_that_generated_them_before_the_next_opens():
    """Round A (tokens 2-4) ends in half an emoji, which round B's second token completes: the
    chunk that brings it stands for A's last token and B's first two."""
    pieces = ["가".encode(), "나".encode(), "다".encode(), b"\xf0\x9f", b"\x98", b"\x80", " 라".encode()]
    drafts = [(0, 0), (3, 2), (3, 2), (3, 2), (6, 4), (6, 4), (6, 4)]
    fake = FakeLlamaServer(State(pieces=pieces, drafts=drafts, spec_types="none,ngram-simple"))
    try:
        session = ServerSession(fake.url)
        events = list(session.generate([{"role": "user", "content": "hi"}], limits=GenerationLimits(7)))
    finally:
        fake.stop()
    rounds = [e for e in events if isinstance(e, Round)]
    assert [len(r.tokens) for r in rounds] == [1, 3, 3] and [r.n_accepted for r in rounds] == [0, 2, 2]
    assert ["".join(t.piece for t in r.tokens) for r in rounds] == ["가", "나다", "😀 라"]
    assert events[-1].n_generated == 7 and events[-1].text == "가나다😀 라"


@pytest.mark.parametrize(
    "drafts", [[(0, 0), (40, 90)], [(0, 0), (6, 4), (3, 2)]], ids=["accepted>drafted", "went down"]
)
def test_a_chunks_draft_counters_that_cannot_be_true_are_never_a_round(fake, drafts):
    fake.state.pieces, fake.state.drafts = [b" a", b" b", b" c"], drafts
    r = run_cli("run", "--server", fake.url, "--json", "-n", "3", "hi")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "counters that cannot be true" in json.loads(r.stdout)["error"]
