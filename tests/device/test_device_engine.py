"""The engine with its layers on the device: backend sampling there gives the tokens numpy
gives (greedy and sampled), the device's greedy text against the CPU backend's, a draft on the
CPU beside a target on the device, and a partial offload. Answers are short: llvmpipe runs
SmolLM2 at a few tokens a second."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spectui.engine.events import Round, TurnEnd
from spectui.engine.interface import GenerationLimits
from spectui.engine.session import Session
from spectui.llama.context import Context
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig

pytestmark = [pytest.mark.model, pytest.mark.device]

PROMPT = [{"role": "user", "content": "Repeat exactly: one two three four, one two three four, one two three four."}]
N = 8


def answer(target: Model, draft: Model | None, spec: SpecConfig, sampling: SamplingParams, bs: str = "auto"):
    """(tokens, [(drafted, accepted) per round], whether the target sampled on the backend)."""
    s = Session(target, draft, ContextParams(n_ctx=512, backend_sampling=bs), spec=spec, sampling=sampling)
    try:
        prompt = target.tokenize_chat(PROMPT)
        events = list(s.generate(tokens=prompt, limits=GenerationLimits(n_predict=N, ignore_eos=True)))
        on_backend = s.ctx.sample_on_backend
    finally:
        s.close()
    end = events[-1]
    assert isinstance(end, TurnEnd) and not end.error, end
    return end.tokens, [(r.drafted, r.n_accepted) for r in events if isinstance(r, Round)], on_backend


@pytest.fixture(scope="module")
def on_device(smol_path):
    m = Model(smol_path, n_gpu_layers=-1)
    assert m.output_on_gpu
    yield m
    m.close()


@pytest.fixture(scope="module")
def on_cpu(smol_path):
    m = Model(smol_path, n_gpu_layers=0)
    assert not m.output_on_gpu
    yield m
    m.close()


@pytest.mark.parametrize(
    "types, sampling",
    [
        (("ngram-simple",), SamplingParams(temp=0.0)),
        (("draft-simple",), SamplingParams(temp=0.0)),
        (("draft-simple",), SamplingParams(temp=0.8, seed=7)),
    ],
    ids=["ngram-simple", "draft-simple", "draft-simple-temp0.8"],
)
def test_backend_sampling_on_the_device_gives_numpys_tokens(on_device, types, sampling):
    """-bs on samples on the device (its output layer is there); -bs off copies the rows to
    numpy: the same tokens, drafts and acceptances for the same seed. The target's greedy argmax
    and its top-k at temperature > 0, and the draft's, each on a decode after the prompt's
    (which wants no rows: the sequence that aborted before)."""
    spec = SpecConfig(types=types, draft_n_max=4)
    draft = on_device if "draft-simple" in types else None
    on = answer(on_device, draft, spec, sampling, bs="on")
    off = answer(on_device, draft, spec, sampling, bs="off")
    assert on[2] and not off[2]
    assert on[:2] == off[:2]
    assert len(on[0]) == N


@pytest.mark.parametrize("types", [("ngram-map-k4v",), ("ngram-cache",), ("auto",), ("ngram-simple", "draft-simple")])
def test_every_other_spec_type_on_the_device_gives_the_targets_own_answer(on_device, types):
    """The types the other device tests leave out, auto among them, with the default -bs auto
    (off on Vulkan: docs/gpu.md): greedy speculation is lossless, so each gives the target's
    plain greedy answer on the same device."""
    greedy = SamplingParams(temp=0.0)
    plain, _, on_backend = answer(on_device, None, SpecConfig(types=("none",)), greedy)
    assert on_backend == (not on_device.on_vulkan)
    draft = on_device if "draft-simple" in types or types == ("auto",) else None
    assert answer(on_device, draft, SpecConfig(types=types, draft_n_max=4), greedy)[0] == plain


def test_llvmpipe_runs_ggml_vulkans_submissions_one_at_a_time(device):
    """llvmpipe reads memory freed under ggml-vulkan's overlapping submissions (docs/gpu.md):
    spectui makes ggml-vulkan wait for each there, unless the user chose. CI runs this suite
    with MALLOC_PERTURB_, under which the n-gram verifications above segfault without it."""
    from spectui.llama import devices, runtime

    on_llvmpipe = any("llvmpipe" in d.description for d in devices.gpus())
    show = "import os; from spectui.llama import runtime as r; print(r.SERIALIZED_BY_SPECTUI, os.getenv(r.SERIALIZE))"
    env = {k: v for k, v in os.environ.items() if k != runtime.SERIALIZE}
    ours = subprocess.run([sys.executable, "-c", show], env=env, capture_output=True, text=True, check=True)
    assert ours.stdout.split() == (["True", "1"] if on_llvmpipe else ["False", "None"])
    theirs = subprocess.run(
        [sys.executable, "-c", show], env={**env, runtime.SERIALIZE: "yes"}, capture_output=True, text=True, check=True
    )
    assert theirs.stdout.split() == ["False", "yes"]


def test_greedy_text_on_the_device_against_the_cpu(on_device, on_cpu, record_property):
    """Another backend's arithmetic: the answers agree up to a near-tie, where a different sum
    order may pick the other token. The agreement is reported; a divergence must be a near-tie."""
    greedy, spec = SamplingParams(temp=0.0), SpecConfig(types=("none",))
    device = answer(on_device, None, spec, greedy)[0]
    cpu = answer(on_cpu, None, spec, greedy)[0]
    agree = next((i for i, (a, b) in enumerate(zip(device, cpu)) if a != b), N)
    record_property("greedy_tokens_agreeing", f"{agree}/{N}")
    print(f"\ndevice and CPU greedy answers agree on {agree} of {N} tokens")
    if agree < N:
        prompt = on_cpu.tokenize_chat(PROMPT)
        ctx = Context(on_cpu, ContextParams(n_ctx=512))
        try:
            row = ctx.decode(prompt + list(cpu[:agree]), [len(prompt) + agree - 1])[0]
        finally:
            ctx.close()
        gap = abs(float(row[device[agree]]) - float(row[cpu[agree]]))
        assert gap < 0.5, f"diverged at {agree} with a logit gap of {gap:.2f}: not a near-tie"


def test_a_draft_on_the_cpu_beside_a_target_on_the_device(on_device, on_cpu):
    """-ngld 0: the draft's layers on the CPU. Greedy speculation is lossless: the target's own
    greedy answer, whatever drafts it."""
    greedy = SamplingParams(temp=0.0)
    plain = answer(on_device, None, SpecConfig(types=("none",)), greedy)
    tokens, rounds, _ = answer(on_device, on_cpu, SpecConfig(types=("draft-simple",), draft_n_max=4), greedy)
    assert tokens == plain[0]
    assert sum(n for _, n in rounds) > 0


def test_a_partial_offload(smol_path):
    """-ngl 10 of SmolLM2's 30 layers: the output layer stays on the CPU, so -bs auto keeps
    the rows in numpy; greedy speculation gives the plain answer of the same split."""
    greedy = SamplingParams(temp=0.0)
    m = Model(smol_path, n_gpu_layers=10)
    try:
        assert not m.output_on_gpu
        plain = answer(m, None, SpecConfig(types=("none",)), greedy)
        tokens, rounds, on_backend = answer(m, m, SpecConfig(types=("draft-simple",), draft_n_max=4), greedy)
    finally:
        m.close()
    assert tokens == plain[0] and len(tokens) == N and not on_backend
    assert sum(n for _, n in rounds) > 0
