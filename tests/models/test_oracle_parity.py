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
from spectui.engine.events import Round
from spectui.engine.interface import GenerationLimits
from spectui.engine.session import Session
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig, parse_types
from tests.conftest import model_file

pytestmark = pytest.mark.model  # every case loads its models (SmolLM2, Gemma 3 or a synthetic checkpoint)

FIXTURES = sorted((Path(__file__).parents[1] / "data" / "oracle").glob("*.json"))


def _spec(case: dict) -> SpecConfig:
    values = {"types": parse_types(case["spec_type"]), "draft_n_max": case["n_max"]}
    flags = case["flags"]
    for flag, value in zip(flags[::2], flags[1::2]):
        field = flag.removeprefix("--spec-").replace("-", "_")  # llama.cpp's flag, spectui's field
        values[field] = float(value) if field == "draft_p_min" else int(value)
    return SpecConfig(**values)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_drafts_match_llama_cpp_round_by_round(fixture, synthetic):
    case = json.loads(fixture.read_text())
    oracle = case["oracle"]

    def path(name: str) -> Path:
        return model_file(name) if name in embedded.CATALOG else synthetic(name.removeprefix("synthetic:"))

    for role, model in case["models"].items():  # the files the oracle ran on
        assert path(model["name"]).name == model["file"], f"{role} changed since recording: re-record"
    target = Model(path(case["target"]))
    draft = Model(path(case["draft"])) if case.get("draft") else None
    session = Session(
        target,
        draft,
        ContextParams(n_ctx=case["n_ctx"], n_threads=case["threads"]),
        spec=_spec(case),
        sampling=SamplingParams(temp=0.0),
        owns_models=True,
    )
    try:
        events = list(
            session.generate(tokens=oracle["prompt_tokens"], limits=GenerationLimits(n_predict=case["n_predict"]))
        )
    finally:
        session.close()
    rounds = [e for e in events if isinstance(e, Round)]
    assert rounds, "spectui ran no round"
    committed = [t for r in oracle["rounds"] for t in r["ids"]]
    if oracle["has_eos"]:  # llama.cpp counts the end-of-generation token; spectui stops at it
        committed = committed[:-1]
    assert list(events[-1].tokens) == committed[: case["n_predict"]]  # the same answer
    n_done = 0  # tokens generated before each round
    for i, (ours, theirs) in enumerate(zip(rounds, oracle["rounds"], strict=False)):
        if n_done >= case["n_predict"] - 1:
            # one token left: llama-speculative-simple's draft limit is 0 there, which its
            # dispatcher reads as "no limit", and it runs past -n; spectui drafts nothing
            assert ours.drafted == () and i == len(rounds) - 1, f"round {i}"
            break
        if oracle["has_eos"] and i == len(rounds) - 1 and len(ours.drafted) < len(theirs["drafted"]):
            # the answer ended at an accepted draft token: spectui reports the draft up to it
            assert list(ours.drafted) == theirs["drafted"][: len(ours.drafted)] == theirs["ids"][: len(ours.drafted)]
            assert ours.n_accepted == len(ours.drafted) < theirs["n_accepted"], f"round {i}"
            break
        assert (list(ours.drafted), ours.n_accepted) == (theirs["drafted"], theirs["n_accepted"]), f"round {i}"
        n_done += len(theirs["ids"])
    assert sum(r.n_accepted for r in rounds) > 0, "no draft was accepted: the case tests nothing"
