"""On the device, spectui drafts what llama.cpp drafts there, round by round: the oracle
(tests/oracle/spec_oracle.cpp, built against the device build's libraries) runs each recorded
case live with every layer offloaded, and spectui replays the same prompt on the same device.
The recorded fixtures hold the CPU's answers; another backend's arithmetic may pick another
token where two logits nearly tie, so the device is checked against itself. Answers are cut
to N tokens: llvmpipe runs SmolLM2 at about a token a second."""

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
# Every way a draft meets the device: an n-gram draft (its lookup is token arithmetic, the
# same on any backend, which the recorded fixtures check for every n-gram type; the device
# only verifies it) in two flavours, a draft model with its own context on the device, and the
# hidden-state heads that read the target's rows back from device tensors: EAGLE-3's layer
# inputs, DFlash's (DSpark reads the same), MTP's NextN embeddings. A case costs about half a
# minute on llvmpipe.
CASES = ("ngram-simple", "ngram-mod", "draft-simple", "draft-eagle3", "draft-dflash", "draft-mtp")


@pytest.fixture(scope="module")
def oracle() -> Path:
    binary = Path(os.environ["LLAMA_CPP_LIB_PATH"]) / "spec_oracle"
    assert binary.is_file(), f"{binary} missing: tests/device/build.sh builds it beside the libraries"
    return binary


@pytest.mark.parametrize("name", CASES)
def test_drafts_match_llama_cpp_on_the_device(name, oracle, synthetic, device):
    case = json.loads((FIXTURES / f"{name}.json").read_text()) | {"n_predict": N}
    args = list(case["args"])
    args[args.index("-n") + 1] = str(N)

    def path(model: str) -> Path:
        return model_file(model) if model in embedded.CATALOG else synthetic(model.removeprefix("synthetic:"))

    files = {"{target}": str(path(case["target"])), "{draft}": str(path(case["draft"])) if case["draft"] else ""}
    argv = [str(oracle), *(files.get(a, a) for a in args), "-ngl", "99", "-ngld", "99"]
    if case["target"].startswith("synthetic:"):
        # llama.cpp's own loop segfaults in Mesa's llvmpipe when a hidden-state draft's sampler is
        # offloaded (docs/gpu.md); greedy drafts take the same argmax on the CPU
        argv.append("--no-spec-draft-backend-sampling")
    ran = subprocess.run(argv, capture_output=True, timeout=600, check=False)
    stderr = ran.stderr.decode(errors="replace")
    assert ran.returncode == 0, stderr[-3000:]
    assert f"using device {device}" in stderr, "the oracle did not offload to the device"
    theirs = json.loads(ran.stdout)
    assert_same_rounds(replay(case, path, theirs["prompt_tokens"]), theirs, case["n_predict"])
