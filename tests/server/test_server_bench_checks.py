"""What `bench --server` refuses before it measures, with or without --concurrency: levels
not typed as whole numbers (as `plan --concurrency` refuses them), the same server twice,
servers running different models, answers longer than a slot. Model-free: nothing listens
at DOWN, and tests/helpers/fake_llama.py stands in for llama-server."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run_cli
from tests.helpers.fake_llama import FakeLlamaServer, State

DOWN = "http://127.0.0.1:9"
CONCURRENCY = {"concurrency": ["--concurrency", "1"], "plain": []}
pytestmark = pytest.mark.usefixtures("dirs")


def one_line(r, code: int = 2) -> str:
    """The error line; the bench's progress ("connecting to URL") may come before it."""
    lines = [line for line in r.stderr.splitlines() if not line.startswith(("connecting to ", "note: "))]
    assert r.returncode == code and "Traceback" not in r.stderr and len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize("value", ["1_0", "+1", "١", "2,٢", "0x2", " 1e1"])
def test_a_level_not_in_ascii_digits_is_refused_as_plan_refuses_it(value):
    said = one_line(run_cli("bench", "--server", DOWN, "--concurrency", value))
    assert "is not a whole number" in said


@pytest.mark.parametrize("value", ["9" * 5000, "0" * 5000 + "1025", "1," + "7" * 5000])
def test_a_level_of_thousands_of_digits_is_one_short_line(value):
    said = one_line(run_cli("bench", "--server", DOWN, "--concurrency", value))
    assert "concurrent requests; give 1 to 1024" in said and len(said) < 120


@pytest.mark.parametrize("value", ["9" * 5000, "+1", "1_0"])
def test_plan_refuses_the_same_levels_with_the_same_parser(value):
    said = one_line(run_cli("plan", "--concurrency", value))
    assert said.startswith("error: --concurrency: ") and len(said) < 120


def test_leading_zeros_are_still_the_level():
    r = run_cli("bench", "--server", DOWN, "--concurrency", "0" * 5000 + "2")
    assert "cannot reach llama-server" in one_line(r)  # accepted: it went on to the server


@pytest.mark.parametrize("mode", CONCURRENCY)
@pytest.mark.parametrize("urls", [f"{DOWN},{DOWN}", f"{DOWN},http://localhost:9/", f"{DOWN}, 127.0.0.1:9"])
def test_the_same_server_twice_is_refused_as_such_before_connecting(urls, mode):
    said = one_line(run_cli("bench", "--server", urls, *CONCURRENCY[mode]))
    assert "gives the same llama-server twice" in said


def test_run_refuses_the_same_server_twice_too():
    assert "same llama-server twice" in one_line(run_cli("run", "--server", f"{DOWN},http://localhost:9", "hi"))


@pytest.fixture
def fakes():
    started: list[FakeLlamaServer] = []

    def start(**state) -> FakeLlamaServer:
        started.append(FakeLlamaServer(State(**state)))
        return started[-1]

    yield start
    for s in started:
        s.stop()


@pytest.mark.parametrize("mode", CONCURRENCY)
def test_servers_running_different_models_are_refused_before_measuring(fakes, mode):
    base = fakes(model_path="/models/gemma-3-270m.gguf")
    spec = fakes(model_path="/models/smollm2-135m.gguf", spec_types="none,ngram-simple")
    said = one_line(run_cli("bench", "--server", f"{base.url},{spec.url}", *CONCURRENCY[mode]))
    assert "run different models" in said and "gemma-3-270m.gguf" in said and "smollm2-135m.gguf" in said
    assert "/completion stream" not in base.state.requests | spec.state.requests


@pytest.mark.parametrize("mode", CONCURRENCY)
def test_answers_longer_than_a_slot_are_refused_before_the_warm_up(fakes, mode):
    base = fakes(n_ctx=2048)
    spec = fakes(n_ctx=2048, spec_types="none,ngram-simple")
    said = one_line(run_cli("bench", "--server", f"{base.url},{spec.url}", "-n", "3000", *CONCURRENCY[mode]))
    assert "-n 3000 does not fit" in said and "slots of 2048 tokens" in said
    assert "/completion stream" not in base.state.requests | spec.state.requests


@pytest.mark.parametrize("mode", CONCURRENCY)
@pytest.mark.parametrize("flag", [["--spec-type", "ngram-mod"], ["--sweep-types", "ngram-mod;ngram-simple"]])
def test_a_speculation_flag_is_refused_not_ignored_since_each_server_fixes_its_own(flag, mode):
    said = one_line(run_cli("bench", "--server", DOWN, *flag, *CONCURRENCY[mode]))
    assert f"{flag[0]} does not apply to" in said
