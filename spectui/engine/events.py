"""Typed events a speculation session yields.

The engine never talks to a UI: the TUI, `spectui run` and the benchmark all consume
these events, and every statistic is a pure function over them (see stats.py).
Times are `time.perf_counter()` seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from spectui.engine.verdicts import Verdict
from spectui.spec_types import Spec


class StopReason(str, Enum):
    EOS = "eos"
    N_PREDICT = "n-predict"
    CANCELLED = "cancelled"
    CONTEXT_FULL = "context full"
    ERROR = "error"


class Source(str, Enum):
    """Where an emitted token came from; the overlay colours by this."""

    TARGET = "target"  # sampled by the target (no draft, or the bonus token)
    DRAFT = "draft"  # drafted by the draft model and accepted
    NGRAM = "ngram"  # drafted by an n-gram drafter and accepted
    RESAMPLED = "resampled"  # rejection sampling drew it from the residual max(0, p - q)


@dataclass(frozen=True)
class Token:
    """One emitted token: its id, its complete-UTF-8 text piece (may be "" while a
    multi-byte character is still incomplete) and its source."""

    id: int
    piece: str
    source: Source


@dataclass(frozen=True)
class TurnStart:
    t: float
    n_prompt: int  # tokens of the whole prompt (history included)
    n_prompt_decoded: int  # tokens actually decoded (the rest was reused from the KV cache)
    n_ctx: int
    config: dict  # SpecConfig.as_dict() at the start of the turn
    n_left_out: int = 0  # the chat's oldest messages the prompt leaves out, to fit the context


@dataclass(frozen=True)
class PromptDone:
    """The prompt is processed; generation starts."""

    t: float
    t_prompt: float  # seconds spent decoding the prompt (target and draft)


@dataclass(frozen=True)
class Round:
    """One draft-verify round.

    `drafted` is what the drafter proposed (by `spec_type`, None when nothing was
    drafted); the first `n_accepted` were accepted and `rejected` is the tail that was
    thrown away. `tokens` are the emitted tokens: the accepted ones followed by one
    target token (the bonus, or the resampled token after a rejection).
    """

    index: int
    t: float  # when the round ended
    spec_type: str | None
    drafted: tuple[int, ...]
    n_accepted: int
    rejected: tuple[int, ...]
    rejected_text: str  # display text of the rejected tail (never part of the answer)
    tokens: tuple[Token, ...]
    t_draft: float
    t_verify: float
    t_other: float
    n_max: int  # draft n-max in force for this round
    verify: str  # "greedy", "match" or "rejection"
    n_past: int  # tokens in the target context after this round
    configured: tuple[Spec, ...] = ()  # the spec types in force, drafted or not; () in a trace from before they were
    note: str = ""  # why this round drafted what it did (spec type "auto")
    t_llama: float = 0.0  # of the round's time, what was spent inside llama.cpp (target and draft)
    # Spec type auto only: set on its path alone, every other round keeps the defaults.
    probe: bool = False  # auto tried the draft model to measure it rather than because it pays
    t_sync: float = 0.0  # of t_draft, the draft cache catching up in a decode of its own (SYNC_APART)
    # Inspect mode only: what the verifier saw at each judged draft position (verdicts.py)
    verdicts: tuple[Verdict, ...] = ()

    @property
    def n_drafted(self) -> int:
        return len(self.drafted)


@dataclass(frozen=True)
class TurnEnd:
    t: float
    stop_reason: StopReason
    text: str  # the answer, without rejected tokens
    n_generated: int
    error: str = ""
    tokens: tuple[int, ...] = field(default=(), repr=False)


Event = TurnStart | PromptDone | Round | TurnEnd
