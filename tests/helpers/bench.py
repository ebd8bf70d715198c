"""Bench runs made by hand (a run of one round, an auto run, a whole result) for the bench's
arithmetic, its report and the one word on speed; and the tiny real bench with its cached curve."""

from __future__ import annotations

import json
from pathlib import Path

from spectui.bench import results
from spectui.bench.peak_memory import MemorySample
from spectui.bench.prompts import Prompt
from spectui.bench.protocol import Config, Measurement, Run
from spectui.config.resolve import resolve
from spectui.engine.auto import NOTHING_PAYS
from spectui.engine.events import PromptDone, Source, StopReason, Token, TurnEnd, TurnStart
from spectui.launch.opening import checked_models
from spectui.plan import cache, identity
from spectui.spec_config import SpecConfig
from tests.conftest import RECORDED_CURVE
from tests.helpers.events import a_round

N = 16
# 2 prompts (the first English qa and code prompt), 16 tokens, 1 thread: the machine is shared.
TINY = [
    "bench",
    "--preset",
    "smollm2",
    "--lang",
    "en",
    "--limit",
    "1",
    "-n",
    str(N),
    "-t",
    "1",
    "--sweep-types",
    "draft-simple;ngram-simple;auto",
    "--sweep-n-max",
    "2",
]
CONFIGS = ["none", "draft-simple n=2", "ngram-simple", "auto n=2"]  # TINY's, as its result labels them

QA_A, QA_B = Prompt("a", "ko", "qa", "?"), Prompt("b", "ko", "qa", "?")


def fake_run(
    config: str,
    prompt: Prompt,
    repeat: int,
    tok_per_s: float,
    drafted: int = 0,
    accepted: int = 0,
    tokens: tuple[int, ...] = (1, 2, 3, 4),
    ttft: float = 0.5,
) -> Run:
    """A run emitting len(tokens) tokens in one round that ends len/tok_per_s after the prompt."""
    gen = len(tokens) / tok_per_s
    emitted = tuple(Token(t, "x", Source.TARGET) for t in tokens)
    events = [
        TurnStart(t=100.0, n_prompt=5, n_prompt_decoded=5, n_ctx=64, config={}),
        PromptDone(t=100.0 + ttft, t_prompt=ttft),
        a_round(
            drafted,
            accepted,
            by="ngram-simple" if drafted else "none",
            tokens=emitted,
            t=100.0 + ttft + gen,
            t_verify=gen,
            n_past=9,
        ),
        TurnEnd(
            t=100.0 + ttft + gen, stop_reason=StopReason.N_PREDICT, text="", n_generated=len(tokens), tokens=tokens
        ),
    ]
    return Run.from_events(config, prompt, repeat, events, MemorySample(1000 + repeat, "rss", None))


AUTO_CFG = Config("auto n=3", SpecConfig(types=("auto",)))
# (spec type, drafted, accepted, t_draft, t_verify, probe, t_sync): 8 rounds, 1.1 s
AUTO_ROUNDS = [  # spec type, drafted, accepted, t_draft, t_verify, probe, t_sync, auto's reason
    ("ngram-simple", 3, 2, 0.01, 0.09, False, 0.0, "expected 1.50x"),
    ("ngram-simple", 2, 0, 0.01, 0.09, False, 0.0, "expected 1.20x"),
    ("draft-simple", 2, 1, 0.30, 0.10, True, 0.2, "probe"),  # a probe that first caught up
    ("draft-simple", 3, 3, 0.05, 0.05, False, 0.0, "expected 1.30x"),
    ("draft-simple", 0, 0, 0.00, 0.10, False, 0.0, "expected 1.10x"),  # chose the draft model, which drafted nothing
    (None, 0, 0, 0.00, 0.10, False, 0.0, NOTHING_PAYS),  # a draft to make, declined
    (None, 0, 0, 0.00, 0.10, False, 0.0, NOTHING_PAYS),
    (None, 0, 0, 0.00, 0.10, False, 0.0, "no n-gram match"),
]


def auto_run(prompt: Prompt, repeat: int, scale: float = 1.0, config: str = AUTO_CFG.label) -> Run:
    """An auto run of AUTO_ROUNDS (14 tokens), every time multiplied by `scale`."""
    t = 100.5
    events: list = [
        TurnStart(t=100.0, n_prompt=5, n_prompt_decoded=5, n_ctx=64, config={}),
        PromptDone(t=t, t_prompt=0.5),
    ]
    for i, (spec_type, n, acc, t_draft, t_verify, probe, t_sync, why) in enumerate(AUTO_ROUNDS):
        t += (t_draft + t_verify) * scale
        events.append(
            a_round(
                n,
                acc,
                by="auto",
                spec_type=spec_type,
                tokens=[Token(7, "x", Source.TARGET)] * (acc + 1),
                index=i,
                t=t,
                t_draft=t_draft * scale,
                t_verify=t_verify * scale,
                n_past=9 + i,
                note=f"auto: {spec_type or 'no draft'}, {why}",
                probe=probe,
                t_sync=t_sync * scale,
            )  # fmt: skip
        )
    events.append(TurnEnd(t=t, stop_reason=StopReason.N_PREDICT, text="", n_generated=14, tokens=(7,) * 14))
    return Run.from_events(config, prompt, repeat, events, MemorySample(1000, "rss", None))


def whole_doc() -> dict:
    """A whole result of hand-made runs, as `spectui bench` builds it: tables, an auto line,
    a verdict with its causes and warnings."""
    configs = [Config("none", SpecConfig()), Config("ngram-simple n=3", SpecConfig(types=("ngram-simple",))), AUTO_CFG]
    runs = [fake_run("none", QA_A, i, 10.0 + i) for i in (0, 1)]
    runs += [fake_run("ngram-simple n=3", QA_A, i, 12.0 + i, drafted=3, accepted=1) for i in (0, 1)]
    runs += [auto_run(QA_A, i) for i in (0, 1)]
    record = {
        "n_predict": 4, "ignore_eos": True, "repeat": 2, "warmup": 1, "temp": 0.8, "top_k": 40, "top_p": 0.95,
        "min_p": 0.05, "seed": 0, "verify": "match", "system": None, "prompts": "shipped", "lang": "ko",
        "category": "all", "limit": 1, "spec_types": ["none", "ngram-simple", "auto"], "n_max": [3],
    }  # fmt: skip
    server = {"url": "http://127.0.0.1:8080", "build_info": "b1", "model_ftype": "Q4_1", "spec_types": ["none"]}
    environment = {
        "server": server | {"n_ctx": 4096},
        "models": {"target": {"file": "SmolLM2-135M-Instruct.Q4_1.gguf"}},
        "cpu": "AMD EPYC 7B13 64-Core Processor",
        "spectui": "0.1",
        "os": "Linux-6.1-x86_64-with-glibc2.36",
        "gpus": [],
        "cpu_count": 2,
        "load_average": 9.0,
    }
    meta = {"started": "2026-01-01T00:00:00", "duration_s": 1.0, "setup": {"preset": "smollm2", "model": "smollm2"}}
    return results.build(Measurement(runs), configs, [QA_A], record, environment, meta)


def cache_tiny_curve() -> Path:
    """spectui plan's recorded SmolLM2 curve, cached (in $SPECTUI_CACHE_DIR) for the pair as
    TINY loads it: the verdict cites it without timing decodes (tests/unit/test_bench_citation.py
    times with fakes)."""
    setup = resolve("smollm2", {"threads": 1})
    key = identity.key(setup, *checked_models(setup))
    recorded = json.loads(RECORDED_CURVE.read_text(encoding="utf-8"))["curve"]
    recorded["draft"] = {d: pts[:2] for d, pts in recorded["target"].items()}  # the draft is the same file
    return cache.store(key, {"curve": recorded})
