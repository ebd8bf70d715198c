"""A recorded oracle case replayed through spectui's Session, and the round-by-round check that
it drafts and accepts what llama.cpp did (tests/models/test_oracle_parity.py on the recorded
fixtures, tests/device/test_device_oracle.py against the oracle run live on the device)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spectui.engine.events import Round
from spectui.engine.interface import GenerationLimits
from spectui.engine.session import Session
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig, parse_types


def spec_of(case: dict) -> SpecConfig:
    values = {"types": parse_types(case["spec_type"]), "draft_n_max": case["n_max"]}
    flags = case["flags"]
    for flag, value in zip(flags[::2], flags[1::2]):
        field = flag.removeprefix("--spec-").replace("-", "_")  # llama.cpp's flag, spectui's field
        values[field] = float(value) if field == "draft_p_min" else int(value)
    return SpecConfig(**values)


def replay(case: dict, path: Callable[[str], Path], prompt_tokens: list[int], n_gpu_layers: int = -1) -> list:
    """spectui's events for the case's prompt tokens, greedy, every layer where n_gpu_layers says."""
    target = Model(path(case["target"]), n_gpu_layers=n_gpu_layers)
    draft = Model(path(case["draft"]), n_gpu_layers=n_gpu_layers) if case.get("draft") else None
    session = Session(
        target,
        draft,
        ContextParams(n_ctx=case["n_ctx"], n_threads=case["threads"]),
        spec=spec_of(case),
        sampling=SamplingParams(temp=0.0),
        owns_models=True,
    )
    try:
        return list(session.generate(tokens=prompt_tokens, limits=GenerationLimits(n_predict=case["n_predict"])))
    finally:
        session.close()


def assert_same_rounds(events: list, oracle: dict, n_predict: int) -> None:
    """The same answer, and in every round the same draft and the same number accepted."""
    rounds = [e for e in events if isinstance(e, Round)]
    assert rounds, "spectui ran no round"
    committed = [t for r in oracle["rounds"] for t in r["ids"]]
    if oracle["has_eos"]:  # llama.cpp counts the end-of-generation token; spectui stops at it
        committed = committed[:-1]
    assert list(events[-1].tokens) == committed[:n_predict]  # the same answer
    n_done = 0  # tokens generated before each round
    for i, (ours, theirs) in enumerate(zip(rounds, oracle["rounds"], strict=False)):
        if n_done >= n_predict - 1:
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
