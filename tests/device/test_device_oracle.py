"""On the device, spectui drafts and accepts what llama.cpp does there, round by round.

A draft model and the n-gram drafts: the oracle (tests/oracle/spec_oracle.cpp, llama.cpp's
speculative loop built against the device build's libraries) runs the recorded case live with
every layer offloaded, and spectui replays the same prompt on the same device; another
backend's arithmetic may pick another token where two logits nearly tie, so the device is
checked against itself. Answers are cut to N tokens: llvmpipe runs SmolLM2 at about a token a
second. The n-gram lookup is token arithmetic, the same on any backend (the recorded fixtures
check every n-gram type); the device only verifies, so two of them stand for the rest.

The hidden-state heads (EAGLE-3, DFlash, DSpark, MTP) read the target's rows back from device
tensors. llama.cpp's own loop segfaults inside Mesa's llvmpipe with each of them (with or
without its draft sampler offloaded; docs/gpu.md), so on the device spectui is checked against
llama.cpp's recorded decisions on the tiny synthetic checkpoints, whole, as on the CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from spectui.config import embedded
from tests.conftest import model_file
from tests.oracle_replay import assert_same_rounds, replay

pytestmark = [pytest.mark.model, pytest.mark.device]

FIXTURES = Path(__file__).parents[1] / "data" / "oracle"
N = 12


def _path(synthetic):
    return lambda model: model_file(model) if model in embedded.CATALOG else synthetic(model.removeprefix("synthetic:"))


@pytest.fixture(scope="module")
def oracle() -> Path:
    binary = Path(os.environ["LLAMA_CPP_LIB_PATH"]) / "spec_oracle"
    assert binary.is_file(), f"{binary} missing: tests/device/build.sh builds it beside the libraries"
    return binary


@pytest.mark.parametrize("name", ["ngram-map-k", "ngram-mod", "draft-simple"])
def test_drafts_match_llama_cpp_run_live_on_the_device(name, oracle, synthetic):
    case = json.loads((FIXTURES / f"{name}.json").read_text()) | {"n_predict": N}
    args = list(case["args"])
    args[args.index("-n") + 1] = str(N)
    path = _path(synthetic)
    files = {"{target}": str(path(case["target"])), "{draft}": str(path(case["draft"])) if case["draft"] else ""}
    argv = [str(oracle), *(files.get(a, a) for a in args), "-ngl", "99", "-ngld", "99"]
    ran = subprocess.run(argv, capture_output=True, timeout=600, check=False)
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-3000:]
    theirs = json.loads(ran.stdout)
    assert_same_rounds(replay(case, path, theirs["prompt_tokens"]), theirs, N)


@pytest.mark.parametrize("name", ["draft-eagle3", "draft-dflash", "draft-dspark", "draft-mtp"])
def test_hidden_state_drafts_on_the_device_match_llama_cpps_recorded_rounds(name, synthetic, device):
    case = json.loads((FIXTURES / f"{name}.json").read_text())
    events = replay(case, _path(synthetic), case["oracle"]["prompt_tokens"])
    assert_same_rounds(events, case["oracle"], case["n_predict"])
