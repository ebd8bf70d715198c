"""Which configurations a bench runs: the sweep against what the loaded session can draft with."""

from __future__ import annotations

from spectui.bench import protocol
from spectui.spec_config import SpecConfig


def _sweep() -> list[protocol.Config]:
    return protocol.plan(SpecConfig(), [("ngram-simple",), ("auto",)], [3, 5, 8])


def test_auto_without_a_model_to_draft_with_runs_once_as_an_n_gram_type():
    configs = protocol.for_session(_sweep(), ("none", "ngram-simple", "auto"))
    assert [c.label for c in configs] == ["none", "ngram-simple", "auto"]
    assert [c.n_max for c in configs] == [None, None, None]  # n-max bounds none of them


def test_auto_with_a_model_to_draft_with_keeps_its_n_max_sweep():
    configs = protocol.for_session(_sweep(), ("none", "ngram-simple", "draft-simple", "auto"))
    assert [c.label for c in configs] == ["none", "ngram-simple", "auto n=3", "auto n=5", "auto n=8"]
    assert [c.n_max for c in configs][2:] == [3, 5, 8]
