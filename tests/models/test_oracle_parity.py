"""spectui drafts what llama.cpp drafts, round by round.

Each fixture in tests/data/oracle was recorded by llama.cpp's own implementation
(tests/oracle: the speculative-simple loop over common/speculative.cpp, built from the
sources llama-cpp-python vendors), greedy, on a fixed prompt. Replaying the same prompt,
settings and models through spectui's Session must draft the same tokens and accept the
same number in every round. The hidden-state types run on tiny synthetic checkpoints
(tests/synthetic_models.py), built here from a fixed seed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spectui.config import embedded
from tests.conftest import model_file
from tests.oracle_replay import assert_same_rounds, replay

pytestmark = pytest.mark.model  # every case loads its models (SmolLM2, Gemma 3 or a synthetic checkpoint)

FIXTURES = sorted((Path(__file__).parents[1] / "data" / "oracle").glob("*.json"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_drafts_match_llama_cpp_round_by_round(fixture, synthetic):
    case = json.loads(fixture.read_text())
    oracle = case["oracle"]

    def path(name: str) -> Path:
        return model_file(name) if name in embedded.CATALOG else synthetic(name.removeprefix("synthetic:"))

    for role, model in case["models"].items():  # the files the oracle ran on
        assert path(model["name"]).name == model["file"], f"{role} changed since recording: re-record"
    assert_same_rounds(replay(case, path, oracle["prompt_tokens"]), oracle, case["n_predict"])
