"""The measurement protocol: which configurations, in which order, how each run is made.

Configurations: the baseline (spec type none) first, then every spec-type set crossed with
every n-max (auto without a model to draft with runs once: see for_session). Each differs
from the baseline only in its types and from its neighbour only in n-max; model, context,
sampling, prompts and output length stay fixed (one variable at a time).

First every configuration makes `warmup` runs of the first prompt (not recorded: page-in,
caches, draft model, what `auto` learns of the machine). Then `repeat` passes: in each,
every prompt is run with every configuration, one after the other, in an order that
rotates from prompt to prompt. Interleaved so, a configuration is never measured minutes
apart from the baseline it is compared with: on a shared or throttling machine, speed
drifts by more than the differences measured.
Every run starts cold (Session.reset()) and generates exactly `n_predict` tokens: as with
llama.cpp's --ignore-eos, the target never chooses an end-of-generation token, unless the
protocol respects EOS.

Ctrl+C (KeyboardInterrupt, wherever it lands) ends the measurement: the completed runs are
kept, the run in progress is dropped and the measurement is marked partial. The engine is
driven on the calling thread, so the interrupt stops it within one decode. A failure
(llama.cpp error) ends it the same way, marked failed, so an hour of runs is not lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from spectui import spec_types
from spectui.bench.peak_memory import MemorySample, sample_memory
from spectui.bench.prompts import Prompt
from spectui.engine.events import Event, PromptDone, Round, TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.stats import TurnSummary, rounds_of, summarize
from spectui.spec_config import MODEL_TYPES, SpecConfig
from spectui.spec_types import Spec

BASELINE = spec_types.BASELINE
T = TypeVar("T")


@dataclass(frozen=True)
class Config:
    label: str  # "none", "draft-simple n=3"
    spec: SpecConfig
    model_drafts: bool = True  # False: auto with no model to draft with, which n-max bounds not

    @property
    def is_baseline(self) -> bool:
        return self.spec.types == (BASELINE,)

    @property
    def n_max(self) -> int | None:
        """The draft n-max it ran with; None where n-max bounds nothing (none, n-gram types)."""
        return self.spec.draft_n_max if self.spec.uses_n_max and self.model_drafts else None

    def as_dict(self) -> dict:
        return {"label": self.label, "spec_type": self.spec.label, "n_max": self.n_max, "spec": self.spec.as_dict()}


def plan(base: SpecConfig, type_sets: list[tuple[spec_types.Spec, ...]], n_maxes: list[int]) -> list[Config]:
    """Baseline, then each type set x each n-max, all other settings taken from `base`. A set
    of n-gram types runs once: they draft up to their own sizes, whatever the n-max."""
    configs = [Config(BASELINE, base.replace(types=(BASELINE,)))]
    for types in type_sets:
        spec = base.replace(types=types)
        if not spec.uses_n_max:
            configs.append(Config(spec.label, spec))
            continue
        for n in n_maxes:
            spec = base.replace(types=types, draft_n_max=n)
            configs.append(Config(f"{spec.label} n={n}", spec))
    labels = [c.label for c in configs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"duplicate configurations: {labels}")
    return configs


def for_session(configs: list[Config], available: Iterable[Spec]) -> list[Config]:
    """The configurations a session that runs the `available` types can tell apart: without a
    model to draft with (no draft file, head or MTP layer), auto drafts n-grams alone, so its
    n-max sweep is one configuration, run once as an n-gram type's is."""
    if any(t in MODEL_TYPES for t in available):
        return configs
    out: list[Config] = []
    for c in configs:
        if c.spec.types != (spec_types.AUTO,):
            out.append(c)
        elif not any(not o.model_drafts for o in out):  # the sweep's first n-max stands for it
            out.append(Config(c.spec.label, c.spec, model_drafts=False))
    return out


@dataclass(frozen=True)
class Protocol:
    n_predict: int = 256
    ignore_eos: bool = True
    repeat: int = 3
    warmup: int = 1
    system: str | None = None


@dataclass(frozen=True)
class Run:
    """One measured run: its events reduced to what the results need."""

    config: str
    prompt: Prompt
    repeat: int
    summary: TurnSummary
    rounds: tuple[Round, ...]
    tokens: tuple[int, ...]
    n_prompt: int
    t_prompt_s: float | None  # prompt processing (target and draft)
    latency_s: float  # the request, TurnStart to TurnEnd
    stop_reason: str
    error: str
    memory: MemorySample  # the larger of the samples after the prompt and at the end

    @classmethod
    def from_events(cls, config: str, prompt: Prompt, repeat: int, events: list[Event], memory: MemorySample) -> Run:
        start = next(e for e in events if isinstance(e, TurnStart))
        end = next(e for e in events if isinstance(e, TurnEnd))
        done = next((e for e in events if isinstance(e, PromptDone)), None)
        return cls(
            config,
            prompt,
            repeat,
            summarize(events),
            tuple(rounds_of(events)),
            end.tokens,
            start.n_prompt,
            done.t_prompt if done else None,
            end.t - start.t,
            end.stop_reason.value,
            end.error,
            memory,
        )


@dataclass
class Measurement:
    runs: list[Run] = field(default_factory=list)
    partial: bool = False
    interrupted: str | None = None  # what was running when Ctrl+C (or the failure) came
    failed: bool = False


OnEvent = Callable[[Config, Prompt, int, Event], None]  # the run's repeat: -1 for a warm-up
OnPass = Callable[[int, dict[str, list[Run]]], None]  # pass index, the runs so far per configuration


def _run(session, cfg: Config, prompt: Prompt, repeat: int, proto: Protocol, on_event: OnEvent) -> Run:
    session.reset()
    limits = GenerationLimits(n_predict=proto.n_predict, ignore_eos=proto.ignore_eos)
    events: list[Event] = []
    peak: MemorySample | None = None
    for ev in session.generate(messages=chat_messages([("user", prompt.text)], proto.system), limits=limits):
        events.append(ev)
        if isinstance(ev, (PromptDone, TurnEnd)):
            s = sample_memory()
            if peak is None or s.used > peak.used:
                peak = s
        on_event(cfg, prompt, repeat, ev)
    return Run.from_events(cfg.label, prompt, repeat, events, peak or sample_memory())


def rotated(items: list[T], k: int) -> list[T]:
    """The order of one prompt's runs, shifted by one from prompt to prompt: the first run
    after a change of prompt measures faster (docs/performance.md), so none is always first."""
    k %= len(items)
    return items[k:] + items[:k]


def measure(
    session,
    configs: list[Config],
    prompts: list[Prompt],
    proto: Protocol,
    on_event: OnEvent = lambda c, p, r, e: None,
    on_pass: OnPass = lambda i, r: None,
) -> Measurement:
    m = Measurement()
    done: dict[str, list[Run]] = {cfg.label: [] for cfg in configs}
    where = "start"
    try:
        for cfg in configs:
            session.configure(cfg.spec)
            for _ in range(proto.warmup):
                where = f"{cfg.label}, warm-up"
                _run(session, cfg, prompts[0], -1, proto, on_event)
        for r in range(proto.repeat):
            for i, p in enumerate(prompts):
                for cfg in rotated(configs, r * len(prompts) + i):
                    where = f"{cfg.label}, pass {r + 1}/{proto.repeat}, {p.id}"
                    session.configure(cfg.spec)
                    run = _run(session, cfg, p, r, proto, on_event)
                    done[cfg.label].append(run)
                    m.runs.append(run)
            where = f"after pass {r + 1}/{proto.repeat}"
            on_pass(r, done)
    except KeyboardInterrupt:
        m.partial, m.interrupted = True, where
    except Exception as e:  # noqa: BLE001 - kept in the result, which is still written
        m.partial, m.interrupted, m.failed = True, f"{where}: {type(e).__name__}: {e}", True
    return m
