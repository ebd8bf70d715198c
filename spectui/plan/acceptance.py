"""The acceptance a plan predicts at: the user's saved answers for the pair and type where
they exist, else a short calibration on the chat's starter prompts.

The calibration answers each starter once with the draft model at n-max 8 (its acceptance per
position gives every n-max from 1 to 8: a draft model's first k tokens do not depend on the
n-max) and keeps the answers' tokens. An n-gram type's draft depends only on the tokens before
it, so its drafts are replayed over those answers, with no model: the answer a type would have
verified is the same text (greedy), or a sample of the same distribution (match sampling).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from spectui.engine.events import Round, TurnEnd, TurnStart
from spectui.engine.stats import per_position_acceptance, rounds_of, timing
from spectui.plan.predict import N_MAX, Drafting
from spectui.spec_config import NGRAM_TYPES, SpecConfig, config_label
from spectui.spec_types import BASELINE, Spec
from spectui.store.chat_types import AnswerConfig

CALIBRATION_TOKENS = 24  # per starter prompt: 3 x 24 drafted-for tokens, about 20 rounds at n-max 8
MIN_DRAFTS = 16  # drafting rounds below which saved answers do not decide a type's acceptance


@dataclass(frozen=True)
class Calibration:
    """What the starter prompts measured: the draft model's acceptance per position at n-max
    8 (empty without one), each answer as (prompt tokens, answer tokens), the seconds per
    round outside llama.cpp without and with a draft, the mean draft length of the latter, and
    the target's single step inside the generation loop (median seconds, at its mean depth)."""

    positions: tuple[float, ...]
    streams: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    overhead_none: float
    overhead_spec: float
    n_rounds: int
    draft_length: float = float(max(N_MAX))
    loop_step: tuple[float, int] | None = None

    @property
    def filler(self) -> list[int]:
        """The calibration's tokens, the first prompt's first: the contexts hold that prompt as
        the calibration ends, so the curve's first depth needs no fill."""
        return [t for p, a in self.streams for t in p + a]

    def as_dict(self) -> dict:
        return {
            "positions": list(self.positions),
            "streams": [[list(p), list(a)] for p, a in self.streams],
            "overhead_none_s": self.overhead_none,
            "overhead_spec_s": self.overhead_spec,
            "rounds": self.n_rounds,
            "draft_length": self.draft_length,
            "loop_step": list(self.loop_step) if self.loop_step else None,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        positions = tuple(float(x) for x in d["positions"])
        if any(not 0 <= x <= 1 for x in positions):
            raise ValueError("an acceptance outside 0..1")
        streams = tuple((tuple(int(t) for t in p), tuple(int(t) for t in a)) for p, a in d["streams"])
        over = float(d["overhead_none_s"]), float(d["overhead_spec_s"])
        length = float(d.get("draft_length", max(N_MAX)))
        if not length > 0:
            raise ValueError("a draft length of 0 or less")
        step = d.get("loop_step")
        loop = (float(step[0]), int(step[1])) if step else None
        if loop is not None and not loop[0] > 0:
            raise ValueError("a loop step of 0 or less")
        return cls(positions, streams, *over, int(d["rounds"]), length, loop)


def _overhead(events: list) -> float:
    ms = timing(events).overhead_ms_per_round
    return (ms or 0.0) / 1000


def calibrate(
    session,
    model_type: str | None,
    spec: SpecConfig,
    prompts: Sequence[str],
    system: str | None,
    status: Callable[[str], object] = lambda s: None,
    done: Callable[[str, float, Sequence[Round]], object] = lambda what, left, rounds: None,
) -> Calibration:
    """Answer each prompt with `model_type` at n-max 8 (or with none, without a draft model),
    the first last, then the first again with none, for its overhead and single step: the
    session is reset once, so that answer reuses the prompt decoded just before, and the
    curve timed next starts from what the contexts hold. `done` after each answer: what ended,
    the calibration's seconds left (each answer as long as the mean so far, none's a third),
    the rounds so far."""
    from spectui.engine.interface import GenerationLimits, chat_messages

    limits = GenerationLimits(n_predict=CALIBRATION_TOKENS, ignore_eos=True)
    drafting = (
        spec.replace(types=(model_type,), draft_n_max=max(N_MAX)) if model_type else spec.replace(types=(BASELINE,))
    )

    def answer(prompt: str, with_spec: SpecConfig) -> list:
        session.configure(with_spec)
        return _answered(list(session.generate(messages=chat_messages([("user", prompt)], system), limits=limits)))

    session.reset()
    rounds: list[Round] = []
    streams: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    spec_overheads, took = [], []
    label = config_label(drafting.types, max(N_MAX))
    order = [*range(1, len(prompts)), 0]
    for n, i in enumerate(order, start=1):
        what = f"starter prompt {n}/{len(prompts)} with {label}"  # counted as answered
        status(f"calibrating: {what}")
        t0 = time.perf_counter()
        events = answer(prompts[i], drafting)
        start = next(e for e in events if isinstance(e, TurnStart))
        end = next(e for e in events if isinstance(e, TurnEnd))
        rounds += rounds_of(events)
        spec_overheads.append(_overhead(events))
        streams[i] = (tuple(session.ctx.tokens[: start.n_prompt]), tuple(end.tokens))
        took.append(time.perf_counter() - t0)
        done(f"calibration: {what}", statistics.fmean(took) * (len(prompts) - n + 1 / 3), rounds)
    status("calibrating: the overhead of a round without a draft")
    none_events = answer(prompts[0], spec.replace(types=(BASELINE,)))
    done("calibration: the first starter prompt with none", 0.0, rounds_of(none_events))
    positions = tuple(per_position_acceptance(rounds))[: max(N_MAX)] if model_type else ()
    drafted = [r.n_drafted for r in rounds if r.n_drafted]
    return Calibration(
        positions,
        tuple(streams[i] for i in range(len(prompts))),
        _overhead(none_events),
        statistics.median(spec_overheads),
        len(rounds),
        statistics.fmean(drafted) if drafted else float(max(N_MAX)),
        _loop_step(rounds_of(none_events)),
    )


def _answered(events: list) -> list:
    """An answer's events, or its error raised."""
    end = next(e for e in events if isinstance(e, TurnEnd))
    if end.error:
        raise RuntimeError(end.error)
    return events


def _loop_step(rounds: Sequence[Round]) -> tuple[float, int] | None:
    """The target's single step as the generation loop runs it: the median llama.cpp seconds
    of `none` rounds, and their mean depth."""
    steps = [r for r in rounds if r.t_llama > 0]
    if len(steps) < 8:
        return None
    return statistics.median(r.t_llama for r in steps), round(statistics.fmean(r.n_past for r in steps))


def replay_ngram(spec_type: Spec, spec: SpecConfig, streams: Sequence[tuple[Sequence[int], Sequence[int]]]) -> Drafting:
    """An n-gram type's drafting over recorded answers, as the session would run it: each round
    drafts after the tokens so far and keeps the prefix the answer confirms, and one more."""
    from spectui.drafters import registry
    from spectui.llama.sampling import SamplingParams

    n_rounds = n_drafts = drafted = accepted = 0
    for prompt, answer in streams:
        if not answer:
            continue
        d = registry.build(spec_type, registry.Needs(spec, SamplingParams(), None))
        seq = list(prompt)  # its last token is the first round's to decode, as in the session
        d.begin(seq[:-1])
        done = 0
        while done < len(answer):
            room = len(answer) - done - 1  # the round's own token: a draft leaves room for it
            draft = d.draft(seq, d.limit(spec.draft_n_max, room)).tokens[:room]
            n = 0
            while n < len(draft) and draft[n] == answer[done + n]:
                n += 1
            if draft:
                d.accept(n)
                n_drafts, drafted, accepted = n_drafts + 1, drafted + len(draft), accepted + n
            seq += answer[done : done + n + 1]
            done += n + 1
            n_rounds += 1
    if not n_drafts:
        return Drafting(0.0, 0.0, 0.0, False)
    return Drafting(n_drafts / n_rounds, drafted / n_drafts, accepted / n_drafts, False)


def ngram_longest(spec: SpecConfig) -> int:
    """The longest draft the n-gram types may make with these sizes (ngram-cache: 8)."""
    return max(spec.ngram_simple_size_m, spec.ngram_map_k_size_m, spec.ngram_map_k4v_size_m, spec.ngram_mod_n_max, 8)


# --- the user's saved answers ---------------------------------------------------------


@dataclass(frozen=True)
class Saved:
    """A type's acceptance pooled over the saved answers of the pair: per position (draft
    model, up to the largest n-max used) or as drafting (n-gram types)."""

    answers: int
    drafts: int
    positions: tuple[float, ...] = ()
    drafting: Drafting | None = None


def saved(answers: Sequence[tuple[dict, AnswerConfig, dict]], target: str, draft: str | None) -> dict[str, Saved]:
    """Per spec type: the answers of chats on this target and draft whose configuration was that
    type alone throughout, pooled (per position weighted by drafts; n-gram counters summed)."""
    from spectui.spec_config import PRIORITY

    pooled: dict[str, list[tuple[int | None, dict]]] = {}
    for setup, config, stats in answers:
        if not isinstance(setup, dict) or setup.get("model") != target or setup.get("model_draft") != draft:
            continue
        if len(config.spec_types) == 1 and config.spec_types[0] in PRIORITY and not config.spec_changes:
            pooled.setdefault(config.spec_types[0], []).append((config.draft_n_max, stats))
    out = {}
    for t, found in pooled.items():
        try:
            if (one := _pooled(t, found)) is not None:
                out[t] = one
        except (TypeError, AttributeError, KeyError, ValueError, ZeroDivisionError):
            continue  # statistics of another shape (an older version's): the calibration decides
    return out


def _pooled(t: str, found: list[tuple[int | None, dict]]) -> Saved | None:
    counters = [(s, s["per_type"][t]) for _, s in found if t in s.get("per_type", {})]
    drafts = sum(c["gen_drafts"] for _, c in counters)
    if drafts < MIN_DRAFTS:
        return None
    if t in NGRAM_TYPES:
        rounds = sum(s["rounds"] for s, _ in counters)
        gen = sum(c["gen_tokens"] for _, c in counters)
        acc = sum(c["acc_tokens"] for _, c in counters)
        return Saved(len(counters), drafts, drafting=Drafting(drafts / rounds, gen / drafts, acc / drafts, False))
    positions = []
    for i in range(max(len(s["per_position"]) for s, _ in counters)):
        weighed = [(c["gen_drafts"], float(s["per_position"][i])) for s, c in counters if len(s["per_position"]) > i]
        positions.append(sum(w * x for w, x in weighed) / sum(w for w, _ in weighed))
    if any(not 0 <= x <= 1 for x in positions):
        raise ValueError("an acceptance outside 0..1")
    return Saved(len(counters), drafts, positions=extended(positions, max(N_MAX)))


def extended(positions: Sequence[float], n: int) -> tuple[float, ...]:
    """s_1..s_n from fewer measured positions: each further position accepted at the last
    measured conditional rate (s_i / s_(i-1))."""
    out = list(positions)
    if not out:
        return ()
    rate = out[-1] / out[-2] if len(out) > 1 and out[-2] > 0 else out[-1]
    while len(out) < n:
        out.append(out[-1] * min(1.0, rate))
    return tuple(out[:n])


def sampling_for_calibration(sampling):
    """The setup's sampling with a fixed seed where it has none: a calibration repeats."""
    return sampling if sampling.seed is not None else replace(sampling, seed=0)
