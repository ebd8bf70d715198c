"""On the device, spectui drafts what llama.cpp drafts there, round by round: the oracle
(tests/oracle/spec_oracle.cpp, built against the device build's libraries) runs each recorded
case live with every layer offloaded, and spectui replays the same prompt on the same device.
The recorded fixtures hold the CPU's answers; another backend's arithmetic may pick another
token where two logits nearly tie, so the device is checked against itself."""

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
# every kind of drafter: the n-gram types and draft-simple on SmolLM2, the hidden-state heads
# on their synthetic checkpoints (the cases with the shortest answers of each kind)
CASES = (
    "ngram-simple",
    "ngram-map-k",
    "ngram-map-k4v",
    "ngram-mod",
    "ngram-cache",
    "draft-simple",
    "draft-eagle3",
    "draft-dflash",
    "draft-dspark",
    "draft-mtp",
)


@pytest.fixture(scope="module")
def oracle() -> Path:
    binary = Path(os.environ["LLAMA_CPP_LIB_PATH"]) / "spec_oracle"
    assert binary.is_file(), f"{binary} missing: tests/device/build.sh builds it beside the libraries"
    return binary


@pytest.mark.parametrize("name", CASES)
def test_drafts_match_llama_cpp_on_the_device(name, oracle, synthetic, device):
    case = json.loads((FIXTURES / f"{name}.json").read_text())

    def path(model: str) -> Path:
        return model_file(model) if model in embedded.CATALOG else synthetic(model.removeprefix("synthetic:"))

    files = {"{target}": str(path(case["target"])), "{draft}": str(path(case["draft"])) if case["draft"] else ""}
    argv = [str(oracle), *(files.get(a, a) for a in case["args"]), "-ngl", "99", "-ngld", "99"]
    ran = subprocess.run(argv, capture_output=True, timeout=600, check=False)
    stderr = ran.stderr.decode(errors="replace")
    assert ran.returncode == 0, stderr[-3000:]
    assert f"using device {device}" in stderr, "the oracle did not offload to the device"
    theirs = json.loads(ran.stdout)
    assert_same_rounds(replay(case, path, theirs["prompt_tokens"]), theirs, case["n_predict"])
