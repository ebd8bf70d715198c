"""The hidden-state types everywhere the other types run, on the synthetic checkpoints:
`spectui run`, the session's offer of types, auto, the A/B comparison, chat turns that reuse
the cache, exact verification at temperature > 0, and the one-line refusals.

That they draft what llama.cpp drafts is test_oracle_parity's job.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

import numpy as np
import pytest

from spectui.engine import ab
from spectui.engine.events import Round, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.session import Session
from spectui.errors import UserError
from spectui.llama import draft_fit, llama_ext
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams, probs
from spectui.spec_config import NGRAM_TYPES, SpecConfig
from tests.helpers.processes import spectui

pytestmark = (
    pytest.mark.model
)  # every test builds the synthetic checkpoints (tests/synthetic_models.py); most load them

PROMPT = "the quick brown fox jumps over the lazy dog. the quick brown fox"
# (spec type, target kind, draft kind)
PAIRS = [
    ("draft-eagle3", "target", "eagle3"),
    ("draft-dflash", "target", "dflash"),
    ("draft-dspark", "target", "dspark"),
    ("draft-mtp", "target-mtp", None),
]


def open_pair(synthetic, target: str, draft: str | None, **spec) -> Session:
    return Session(
        Model(synthetic(target)),
        Model(synthetic(draft)) if draft else None,
        ContextParams(n_ctx=512),
        spec=SpecConfig(**spec),
        sampling=SamplingParams(temp=0.0),
        owns_models=True,
    )


def rounds(events) -> list[Round]:
    return [e for e in events if isinstance(e, Round)]


@pytest.mark.parametrize("spec_type,target,draft", PAIRS, ids=[p[0] for p in PAIRS])
def test_spectui_run_json_drafts_with_each_type(synthetic, spec_type, target, draft):
    args = ["-m", str(synthetic(target))] + (["-md", str(synthetic(draft))] if draft else [])
    r = spectui("run", *args, "--spec-type", spec_type, "--temp", "0", "-n", "32", "--json", PROMPT)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["config"]["spec_type"] == spec_type
    by_type = data["stats"]["per_type"][spec_type]
    assert by_type["gen_tokens"] > 0 and by_type["acc_tokens"] > 0


def test_spectui_run_coloured_summary_names_the_type(synthetic):
    r = spectui(
        "run",
        "-m",
        str(synthetic("target")),
        "-md",
        str(synthetic("eagle3")),
        "--temp",
        "0",
        "-n",
        "24",
        PROMPT,
        env={"COLUMNS": "200"},
    )
    assert r.returncode == 0, r.stderr
    # no --spec-type: the preset's draft-simple becomes what the draft file is, as llama.cpp reads it
    assert "is a draft-eagle3 draft: speculating with draft-eagle3" in r.stderr
    assert "accepted / drafted" in r.stderr and r.stdout.strip()


def test_bench_measures_a_hidden_state_draft_against_none(synthetic, tmp_path):
    out = tmp_path / "bench.json"
    r = spectui(
        "bench",
        "-m",
        str(synthetic("target")),
        "-md",
        str(synthetic("dspark")),
        "--spec-type",
        "draft-dspark",
        "--sweep-n-max",
        "3",
        "--lang",
        "en",
        "--limit",
        "1",
        "--repeat",
        "1",
        "-n",
        "16",
        "--json",
        str(out),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["results"]
    spec = [row for row in rows if row["spec_type"] == "draft-dspark"]
    assert spec and all(row["n_drafted"] > 0 for row in spec)
    assert any(row["spec_type"] == "none" for row in rows)


@pytest.mark.parametrize("p_min", [0.0, 0.5])
@pytest.mark.parametrize("spec_type,target,draft", PAIRS, ids=[p[0] for p in PAIRS])
def test_sampling_on_the_backend_drafts_and_accepts_the_same(synthetic, spec_type, target, draft, p_min):
    """-bs on with a hidden-state draft: the target's greedy chain must leave the hidden rows
    the draft reads as they were, and the draft's top 10 taken in the graph (llama.cpp's
    --spec-draft-backend-sampling) must give the draft the rows gave, --spec-draft-p-min
    included: the same drafts, acceptances and tokens."""
    answers = []
    for bs in ("on", "off"):
        s = Session(
            Model(synthetic(target)),
            Model(synthetic(draft)) if draft else None,
            ContextParams(n_ctx=512, backend_sampling=bs),
            spec=SpecConfig(types=(spec_type,), draft_p_min=p_min),
            sampling=SamplingParams(temp=0.0),
            owns_models=True,
        )
        try:
            assert s._drafting.followers[0].top_on_backend == (bs == "on")
            events = list(s.generate(tokens=s.target.tokenize(PROMPT), limits=GenerationLimits(n_predict=32)))
        finally:
            s.close()
        answers.append([(r.drafted, r.n_accepted, r.tokens) for r in rounds(events)])
    assert answers[0] == answers[1] and sum(n for _, n, _ in answers[0]) > 0


@pytest.mark.parametrize("spec_type,target,draft", PAIRS, ids=[p[0] for p in PAIRS])
def test_reading_hidden_rows_counts_as_llama_time(synthetic, monkeypatch, spec_type, target, draft):
    """The getters of hidden rows wait for the computation (on a GPU the decode runs on after
    llama_process returns): slowed down by 60 ms, their time must land in llama time, not in the
    overhead per round (dspark reads its confidences only under --spec-draft-p-min)."""
    s = open_pair(synthetic, target, draft, types=(spec_type,), draft_n_max=3, draft_p_min=0.01)
    calls = []

    def slow(name, fn):
        def call(*args):
            calls.append(name)
            time.sleep(0.06)
            return fn(*args)

        return call

    for name in ("llama_get_embeddings_layer_inp", "llama_get_embeddings_nextn", "llama_get_embeddings_nextn_ith"):
        monkeypatch.setitem(llama_ext._fns, name, slow(name, llama_ext.fn(name)))
    try:
        rs = rounds(s.generate(tokens=s.target.tokenize(PROMPT), limits=GenerationLimits(n_predict=12)))
    finally:
        s.close()
    assert len(calls) > len(rs) and sum(r.n_accepted for r in rs) > 0
    for r in rs:
        assert r.t_draft + r.t_verify + r.t_other - r.t_llama < 0.06


@pytest.mark.parametrize("spec_type,target,draft", PAIRS, ids=[p[0] for p in PAIRS])
def test_the_session_offers_exactly_what_the_models_allow(synthetic, spec_type, target, draft):
    s = open_pair(synthetic, target, draft)
    try:
        assert s.choices() == tuple((t,) for t in ("none",) + NGRAM_TYPES + (spec_type, "auto"))
        with pytest.raises(UserError, match="not available"):
            s.configure(SpecConfig(types=("draft-simple",)))
    finally:
        s.close()


def test_auto_takes_the_hidden_state_draft_as_its_model_candidate(synthetic):
    s = open_pair(synthetic, "target", "eagle3", types=("auto",), draft_n_max=4)
    try:
        rs = rounds(s.generate(tokens=s.target.tokenize(PROMPT), limits=GenerationLimits(n_predict=96)))
        used = {r.spec_type for r in rs}
    finally:
        s.close()
    assert "draft-eagle3" in used and "draft-simple" not in used
    assert all(r.note.startswith(("auto: draft-eagle3", "auto: ngram-simple", "auto: no draft")) for r in rs)


def test_ab_compares_a_hidden_state_draft_with_none(synthetic):
    s = open_pair(synthetic, "target", "dspark", draft_n_max=3)
    try:
        runs = []
        for spec in (SpecConfig(), SpecConfig(types=("draft-dspark",), draft_n_max=3)):
            s.reset()
            s.configure(spec)
            runs.append(list(s.generate(tokens=s.target.tokenize(PROMPT), limits=GenerationLimits(n_predict=32))))
    finally:
        s.close()
    verdict = ab.compare(*runs)
    assert verdict.identical  # greedy: speculation never changes the answer
    assert any(r.n_accepted for r in rounds(runs[1]))


def test_chat_turns_reuse_the_cache_and_an_edited_history_is_read_again(synthetic):
    s = open_pair(synthetic, "target", "eagle3", types=("draft-eagle3",), draft_n_max=4)
    limits = GenerationLimits(n_predict=24)
    try:
        turns = [("user", PROMPT)]
        first = list(s.generate(chat_messages(turns), limits=limits))
        turns += [("assistant", first[-1].text), ("user", "the lazy dog")]
        second = list(s.generate(chat_messages(turns), limits=limits))
        start = next(e for e in second if isinstance(e, TurnStart))
        assert start.n_prompt_decoded < start.n_prompt  # the first turn's cache was kept
        assert sum(r.n_accepted for r in rounds(second)) > 0
        edited = [("user", "a different question"), *turns[1:]]
        third = list(s.generate(chat_messages(edited), limits=limits))
        start = next(e for e in third if isinstance(e, TurnStart))
        assert start.n_prompt_decoded == start.n_prompt  # its state was for another text
        assert isinstance(third[-1], TurnEnd) and not third[-1].error
    finally:
        s.close()


@pytest.mark.parametrize("verify", ["match", "rejection"])
def test_verification_stays_exact_at_temperature_with_a_hidden_state_draft(synthetic, verify):
    """The first answer token follows the target's own distribution (chi-squared), although
    a greedy EAGLE-3 draft proposes it."""
    sampling = SamplingParams(temp=1.5, top_k=0, top_p=1.0, min_p=0.0, seed=7)
    s = Session(
        Model(synthetic("target")),
        Model(synthetic("eagle3")),
        ContextParams(n_ctx=256),
        spec=SpecConfig(types=("draft-eagle3",), draft_n_max=2, verify=verify),
        sampling=sampling,
        owns_models=True,
    )
    prompt = s.target.tokenize(PROMPT)
    try:
        n = 1000
        counts: dict[int, int] = {}
        drafted = 0
        for _ in range(n):
            events = list(s.generate(tokens=prompt, limits=GenerationLimits(n_predict=2, ignore_eos=True)))
            first = rounds(events)[0]
            drafted += bool(first.drafted)
            counts[first.tokens[0].id] = counts.get(first.tokens[0].id, 0) + 1
        s.reset()
        s.keep_logits = True
        list(s.generate(tokens=prompt, limits=GenerationLimits(n_predict=1, ignore_eos=True)))
        p = probs(s.last_logits[0], sampling).astype(np.float64)
    finally:
        s.close()
    assert drafted == n
    p /= p.sum()
    top = [t for t in np.argsort(-p)[:8] if p[t] * n >= 5]
    observed = np.array([counts.get(int(t), 0) for t in top] + [n - sum(counts.get(int(t), 0) for t in top)])
    expected = np.array([p[t] * n for t in top] + [n * (1 - p[top].sum())])
    keep = expected > 0
    chi2 = float((((observed - expected) ** 2)[keep] / expected[keep]).sum())
    assert chi2 < 26.1, (chi2, observed, expected)  # 99.9% point of chi2 with 8 degrees of freedom


def _header(synthetic, kind: str) -> draft_fit.Header:
    return draft_fit.read_header(synthetic(kind))


@pytest.mark.parametrize(
    "change,match",
    [
        ({"target_layers": (1, 2, 9)}, "reads target layer 9"),
        ({"target_layers": (1, 2)}, "EAGLE-3 reads 3"),
        ({"target_hidden_size": 128}, "n_embd 128"),
    ],
)
def test_an_eagle3_draft_that_does_not_fit_is_refused(synthetic, change, match):
    with pytest.raises(UserError, match=match):
        draft_fit.check(
            _header(synthetic, "target"), replace(_header(synthetic, "eagle3"), **change), ("draft-eagle3",)
        )


def test_a_dflash_draft_without_its_metadata_is_refused(synthetic):
    with pytest.raises(UserError, match="dflash.block_size"):
        draft_fit.check(
            _header(synthetic, "target"), replace(_header(synthetic, "dflash"), block_size=None), ("draft-dflash",)
        )


@pytest.mark.parametrize(
    "args,match",
    [
        (
            ("-m", "target", "-md", "eagle3", "--spec-type", "draft-simple"),
            "is a draft-eagle3 draft, not a draft-simple",
        ),
        (("-m", "target", "-md", "SMOL", "--spec-type", "draft-eagle3"), "is a draft-simple draft, not a draft-eagle3"),
        (("-m", "target", "-md", "dspark", "--spec-type", "draft-dflash"), "is a draft-dspark draft"),
        (("-m", "target", "--spec-type", "draft-mtp"), "needs a target with NextN"),
        (("-m", "target", "--spec-type", "draft-eagle3"), "needs a draft model"),
        (("-m", "SMOL", "-md", "eagle3", "--spec-type", "draft-eagle3"), "n_embd 64"),
    ],
)
def test_misfits_exit_2_with_one_line(synthetic, args, match):
    args = [
        a
        if a.startswith("-") or a.startswith("draft-")
        else ("smollm2-135m-instruct-q4_1" if a == "SMOL" else str(synthetic(a)))
        for a in args
    ]
    r = spectui("run", *args, "-n", "4", "hello")
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and match in lines[0], r.stderr


def test_a_llama_cpp_python_without_the_symbols_names_one_and_the_rest_runs(synthetic, monkeypatch):
    monkeypatch.setattr(llama_ext, "_EXT", {**llama_ext._EXT, "llama_not_exported": ("_Z0x", [], None)})
    monkeypatch.setattr(llama_ext, "_fns", {})
    monkeypatch.setattr(llama_ext, "_missing", None)
    line = llama_ext.missing()
    assert "llama_not_exported" in line and "llama-cpp-python 0.3" in line and "\n" not in line
    with pytest.raises(UserError, match="llama_not_exported"):
        open_pair(synthetic, "target", "eagle3")
    s = open_pair(synthetic, "target-mtp", None, types=("ngram-simple",))  # draft-mtp is simply not offered
    try:
        assert ("draft-mtp",) not in s.choices()
        assert isinstance(
            list(s.generate(tokens=s.target.tokenize(PROMPT), limits=GenerationLimits(n_predict=8)))[-1], TurnEnd
        )
    finally:
        s.close()
